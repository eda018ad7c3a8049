"""A Python server that dies at start on a missing credential: a KeyError."""

import os

KEY = os.environ["WEATHER_API_KEY"]
