package cause

import (
	"regexp"
	"strings"
)

// A container engine's CLI states its own failures on a line of its own
// ("docker: Error response from daemon: No such image: mcp/time:latest.",
// "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock.
// Is the docker daemon running?", podman's "Error: …") and ends with a
// pointer to its usage ("See 'docker run --help'.", docker 28's "Run 'docker
// run --help' for more information"), which never says why.

var (
	engineStated  = lazy(`^(?:docker|podman): \S`)
	engineChatter = lazy(`^(?:See '(?:docker|podman) [\w -]*--help'\.?|Run '(?:docker|podman) [\w -]*--help' for more information)$`)
)

// engineAdvice is what to do about an engine's failure, by what its line says.
var engineAdvice = []struct {
	says   func() *regexp.Regexp
	advice string
}{
	{lazy(`Cannot connect to the Docker daemon|Is the docker daemon running|Cannot connect to Podman`),
		"the container engine is not running: start it (Docker Desktop, or `sudo systemctl start docker`), or point DOCKER_HOST or --context at one that runs"},
	{lazy(`permission denied while trying to connect to the Docker daemon`),
		"this user may not use the Docker engine: add it to the docker group (then log in again), or use rootless Docker or podman"},
	{lazy(`(?i)No such image|image not known`),
		"the image is not on this machine and the run may not pull it (--pull never): pull it first (`docker pull IMAGE`) or drop --pull never"},
	{lazy(`pull access denied|repository does not exist|manifest unknown|manifest for \S+ not found|not found: manifest`),
		"the image could not be pulled: check its name and tag, and `docker login` for a private registry"},
	{lazy(`Error response from daemon: Get "https?://|dial tcp|no such host|TLS handshake timeout|i/o timeout`),
		"the image is not on this machine and the registry could not be reached: check the network (or a proxy), or pull the image where it can be and load it"},
}

// Advice is what to do about the failure line states, when it is a
// container engine's; "" for any other line.
func Advice(line string) string {
	if !engineStated().MatchString(line) && !strings.HasPrefix(line, "Error: ") {
		return ""
	}
	for _, a := range engineAdvice {
		if a.says().MatchString(line) {
			return a.advice
		}
	}
	return ""
}
