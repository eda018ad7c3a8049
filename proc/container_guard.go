package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// GuardContainerFlag starts the guard's container arguments, before its
// own: --container CIDFILE N ENGINE... (N words of ContainerRun.Engine).
// The guard that outlives a killed shim stops the container too.
const GuardContainerFlag = "--container"

// CIDDirPrefix names the directories the shim makes for a run's cidfile.
const CIDDirPrefix = "mcpshim-cid-"

// GuardContainer splits the container arguments off the guard's args: the
// container's engine and cidfile, and the args that follow. ok is false
// for malformed ones; r is nil when there are none.
func GuardContainer(args []string) (r *ContainerRun, cidfile string, rest []string, ok bool) {
	if len(args) == 0 || args[0] != GuardContainerFlag {
		return nil, "", args, true
	}
	if len(args) < 3 {
		return nil, "", nil, false
	}
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 1 || len(args) < 3+n {
		return nil, "", nil, false
	}
	return &ContainerRun{Engine: args[3 : 3+n]}, args[1], args[3+n:], true
}

// StopGuarded is the guard's last act, once the group is dead: the
// container whose id the CLI wrote to cidfile is stopped (the shim that
// would have is gone), and the shim's directory for it removed.
func (r ContainerRun) StopGuarded(cidfile string) {
	if id := ReadCID(cidfile); id != "" {
		r.Stop(context.Background(), os.Environ(), id, guardContainerGrace, false)
	}
	if dir := filepath.Dir(cidfile); strings.HasPrefix(filepath.Base(dir), CIDDirPrefix) {
		os.RemoveAll(dir)
	}
}

// guardContainerGrace is the stop's grace the guard gives a container.
const guardContainerGrace = 2 * time.Second
