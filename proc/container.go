package proc

import "strings"

// ContainerRun is a server started as `docker run …`, `docker container run
// …` or `podman run …`: the engine's CLI is the shim's child, but the server
// runs in a container under the engine's daemon (containerd, conmon),
// outside the child's process group, so killing the group does not stop it.
type ContainerRun struct {
	// Engine is the argv that reaches the same engine again: the command and
	// its global options (--context, -H, --url …), without the subcommand.
	Engine []string
	// Run is the index in the command of the run subcommand's last word
	// ("run"): options the shim adds go right after it.
	Run int
	// Image is the image's argument; the container's own command follows it.
	Image string
	// Interactive: -i was given (the container's stdin is the server's).
	Interactive bool
	// CIDFile is the --cidfile the command already gives, "" for none.
	CIDFile string
}

// engineBools are the engines' global options that take no value (docker's
// and podman's); every other global option takes one, as --context does.
var engineBools = map[string]bool{"-D": true, "--debug": true, "--tls": true, "--tlsverify": true, "-r": true, "--remote": true}

// runBools are run's options that take no value, docker's and podman's
// (`docker run --help`, `podman run --help`); every other option takes one
// unless it is spelt --opt=value. Short ones may be combined: -it, -di.
var runBools = map[string]bool{
	"--detach": true, "--disable-content-trust": true, "--help": true, "--init": true, "--interactive": true,
	"--no-healthcheck": true, "--oom-kill-disable": true, "--privileged": true, "--publish-all": true, "--quiet": true,
	"--read-only": true, "--rm": true, "--sig-proxy": true, "--tty": true, "--use-api-socket": true,
	// podman's own
	"--env-host": true, "--http-proxy": true, "--no-hosts": true, "--passwd": true, "--read-only-tmpfs": true,
	"--replace": true, "--rmi": true, "--rootfs": true, "--tls-verify": true,
}

// shortBools are run's one-letter options that take no value.
const shortBools = "diPqt"

// ParseContainerRun reads command (argv, the command first) as a container
// engine's run; ok is false for anything else (docker exec, docker compose,
// a command that is not docker or podman).
func ParseContainerRun(command []string) (r ContainerRun, ok bool) {
	if len(command) == 0 {
		return r, false
	}
	if name := commandName(command[0]); name != "docker" && name != "podman" {
		return r, false
	}
	i := 1
	for ; i < len(command) && strings.HasPrefix(command[i], "-"); i++ {
		if a := command[i]; !strings.Contains(a, "=") && !engineBools[a] {
			i++ // its value
		}
	}
	r.Engine = command[:min(i, len(command)):min(i, len(command))]
	switch {
	case i < len(command) && command[i] == "run":
	case i+1 < len(command) && command[i] == "container" && command[i+1] == "run":
		i++
	default:
		return ContainerRun{}, false
	}
	r.Run = i
	for i++; i < len(command); i++ {
		a := command[i]
		switch {
		case a == "--":
			i++
		case strings.HasPrefix(a, "--"):
			name, value, inline := strings.Cut(a, "=")
			switch {
			case name == "--interactive":
				r.Interactive = !inline || value == "true"
			case name == "--cidfile" && inline:
				r.CIDFile = value
			case name == "--cidfile" && i+1 < len(command):
				r.CIDFile = command[i+1]
			}
			if !inline && !runBools[name] {
				i++
			}
			continue
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// -it, -e NAME, -eNAME, -p8080:80: letters until the first that takes a value.
			for j := 1; j < len(a); j++ {
				if a[j] == 'i' {
					r.Interactive = true
				}
				if !strings.ContainsRune(shortBools, rune(a[j])) {
					if j == len(a)-1 {
						i++ // the next argument is its value
					}
					break
				}
			}
			continue
		}
		if i < len(command) {
			r.Image = command[i]
			return r, true
		}
	}
	return ContainerRun{}, false
}
