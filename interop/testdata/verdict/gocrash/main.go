// Command gocrash is a Go server that dies at start the way a Go program
// does on a bug: a panic with its stack (a nil map written to).
package main

import "os"

func main() {
	var tools map[string]string
	if len(os.Args) > 5 {
		return
	}
	tools["weather"] = os.Getenv("WEATHER_API_KEY") // panic: assignment to entry in nil map
}
