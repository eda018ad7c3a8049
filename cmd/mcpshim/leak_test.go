package main

import (
	"math/rand/v2"
	"strings"
)

// plantedSecrets are the shapes of secret the README says never reach the
// disk, each around a fresh random core: the core must not survive.
func plantedSecrets(rng *rand.Rand) (text string, args []string, cores []string) {
	core := func(n int) string {
		const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = alnum[rng.IntN(len(alnum))]
		}
		b[0] = '7' // a digit, as generated credentials have
		s := string(b)
		cores = append(cores, s)
		return s
	}
	shapes := []string{
		"ghp_" + core(36), "glpat-" + core(20), "sk_live_" + core(24), "AIzaSy" + core(33), "xoxb-1234-" + core(24),
		"sk-proj-" + core(24), "hf_" + core(34), "npm_" + core(36), "api_key=" + core(16), "password: " + core(12),
		"--token " + core(16), "--auth=" + core(16), "redis://:" + core(16) + "@cache", "https://u:" + core(16) + "@h/x",
		"token " + core(20), "eyJhbGciOiJIUzI1NiJ9." + core(24) + ".c2ln", `"client_secret":"` + core(16) + `"`,
	}
	rng.Shuffle(len(shapes), func(i, j int) { shapes[i], shapes[j] = shapes[j], shapes[i] })
	text = strings.Join(shapes, " ") + " Authorization: Basic " + core(24) // to the end of the line
	args = []string{"--api-key", core(16), "--pass=" + core(16), "-c", "exec x --secret " + core(16), "postgres://app:" + core(16) + "@db/app"}
	return text, args, cores
}
