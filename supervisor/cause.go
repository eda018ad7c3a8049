package supervisor

import (
	"fmt"
)

// causeTail is how many stderr lines an owed error's data carries.
const causeTail = 5

// owedMessage is the message of an error the shim writes in place of the
// server's answer, with the cause the client should show: what stopped the
// server, in its own words when it gave some.
// A server that is not running is said to be so by its cause alone.
func (s *Supervisor) owedMessage(why string) string {
	s.causeMu.Lock()
	defer s.causeMu.Unlock()
	switch {
	case s.cause == "":
	case why == notRunning:
		why = s.cause
	default:
		why += " (" + s.cause + ")"
	}
	return fmt.Sprintf("mcpshim: server %s %s; the request was not answered", s.cfg.Name, why)
}

const notRunning = "is not running"

// causeData adds the details behind the cause to an owed error's data.
func (s *Supervisor) causeData(data map[string]any) map[string]any {
	s.causeMu.Lock()
	defer s.causeMu.Unlock()
	if s.cause != "" {
		data["cause"] = s.cause
	}
	if s.spawnErr != nil {
		data["error_class"] = s.spawnErr.Class
		data["error"] = s.spawnErr.Error()
		if s.spawnErr.Hint != "" {
			data["hint"] = s.spawnErr.Hint
		}
	}
	if tail := s.cur.Load().tail; tail != nil {
		if lines := tail.Lines(); len(lines) > 0 {
			data["stderr_tail"] = lines[max(0, len(lines)-causeTail):]
		}
	}
	return data
}
