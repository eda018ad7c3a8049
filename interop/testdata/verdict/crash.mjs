// A node server that throws at start, as one whose credential is missing.
const key = process.env.WEATHER_API_KEY;
if (!key) {
  throw new Error("WEATHER_API_KEY is not set");
}
