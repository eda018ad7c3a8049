package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupRoot is where the cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// oomFile is the file that counts pid's memory cgroup's OOM kills: cgroup
// v1's memory controller (memory.oom_control) when the process has one,
// else cgroup v2's memory.events.
func oomFile(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", err
	}
	var unified string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			unified = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			return filepath.Join(cgroupRoot, "memory", parts[2], "memory.oom_control"), nil
		}
	}
	if unified == "" {
		return "", fmt.Errorf("/proc/%d/cgroup names no memory cgroup", pid)
	}
	f := filepath.Join(cgroupRoot, unified, "memory.events")
	if _, err := os.Stat(f); err != nil {
		return "", err
	}
	return f, nil
}
