package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/proc"
)

// A server run as `docker run -i --rm IMAGE` lives in a container under the
// engine's daemon, outside the CLI's process group: the ladder ends the CLI,
// not the server. So the shim has the CLI write the container's id
// (--cidfile), and once the CLI is gone it stops the container itself, or
// its guard does if the shim dies first; the run's exited record says what
// the engine said of the container then.

// Fields of the exited record of a container's run.
const (
	FieldContainerID    = "container_id"
	FieldContainer      = "container"       // gone, stopped, running, unknown, or none (never created)
	FieldContainerError = "container_error" // why the engine could not be asked
)

// containerNone: the CLI never wrote an id; to its knowledge no container
// was created (the daemon was down, the image missing, the pull failed).
const containerNone = "none"

// container is a run's container: how to reach its engine, and where the
// CLI writes its id.
type container struct {
	run     proc.ContainerRun
	cidfile string
	dir     string // the shim's directory holding cidfile; "" for the command's own --cidfile
}

// containerOf is spec's container, for a container engine's run: spec then
// has --cidfile added, and the guard's argv says where the id will be and
// how to reach the engine (proc.RunContainerGuard). Anything else is
// returned as it is, with no container.
func containerOf(spec proc.Spec, guard []string) (*container, proc.Spec, []string) {
	command := append([]string{spec.Path}, spec.Args...)
	r, ok := proc.ParseContainerRun(command)
	if !ok {
		return nil, spec, guard
	}
	ct := &container{run: r, cidfile: r.CIDFile}
	if ct.cidfile == "" {
		dir, err := os.MkdirTemp("", proc.CIDDirPrefix)
		if err != nil {
			return nil, spec, guard
		}
		ct.dir, ct.cidfile = dir, filepath.Join(dir, "cid")
		spec.Args = r.WithCIDFile(command, ct.cidfile)[1:]
	}
	if len(guard) > 0 {
		guard = slices.Concat(guard, []string{proc.GuardContainerFlag, ct.cidfile, strconv.Itoa(len(r.Engine))}, r.Engine)
	}
	return ct, spec, guard
}

// stopContainer ends the run's container once its CLI has exited, by SIGKILL
// at once when the CLI was killed so (the engine forwarded the ladder's
// SIGTERM before), else by the engine's stop with the kill grace, and says
// what became of it. Nil for a run with no container.
func (s *Supervisor) stopContainer(c *child, sig string) []ledger.Field {
	ct := c.start.ctr
	if ct == nil {
		return nil
	}
	if ct.dir != "" {
		defer os.RemoveAll(ct.dir)
	}
	id := proc.ReadCID(ct.cidfile)
	if id == "" {
		return []ledger.Field{ledger.F(FieldContainer, containerNone)}
	}
	state, why := ct.run.Stop(context.Background(), s.cfg.Spec.Env, id, s.cfg.KillGrace, sig == proc.KillName)
	fields := []ledger.Field{ledger.F(FieldContainerID, id), ledger.F(FieldContainer, state)}
	switch state {
	case proc.ContainerRunning:
		s.say("its container %s is still running: the engine would not stop it (try: %s stop %s)", short(id), ct.run.Engine[0], short(id))
	case proc.ContainerUnknown:
		fields = append(fields, ledger.F(FieldContainerError, why))
		s.say("could not ask the engine whether container %s still runs: %s (see: %s ps)", short(id), why, ct.run.Engine[0])
	}
	return fields
}

// short is a container id as docker ps shows it.
func short(id string) string {
	return id[:min(12, len(id))]
}

// noStdin is said of a container run without -i: the engine gives the
// container no stdin, so the server never reads a request. "" otherwise.
func noStdin(c *child) string {
	if c.start == nil || c.start.ctr == nil || c.start.ctr.run.Interactive {
		return ""
	}
	return "`" + c.start.ctr.run.Engine[0] + " run` without -i: the container got no stdin, so the server reads no request (add -i: docker run -i --rm IMAGE)"
}

// noStdinSuffix is noStdin for the end of the client's error message.
func noStdinSuffix(c *child) string {
	if hint := noStdin(c); hint != "" {
		return "; " + hint
	}
	return ""
}
