package remote

// What a failed exchange does: the policy judges it, its requests get their
// one answer, and an outage takes every other request in flight with it.

import (
	"fmt"
	"net/http"
	"time"
)

// judge asks the policy about one exchange. A failure while an outage is
// already being handled only fails its request: one outage, one count.
func (b *bridge) judge(class Class, resent bool, why string, after time.Duration) Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	if class == Unreachable && b.down {
		return Decision{Action: FailRequest, Reason: "the server is unreachable"}
	}
	d := b.recon.Next(time.Now(), class, resent, after)
	if d.Action == Reconnect || d.Action == GiveUp {
		b.down, b.downReason = true, why
		b.newStepLocked()
	}
	return d
}

// newStepLocked opens the backoff step of a failure at the failure itself,
// not when the loop schedules it: a request that comes in between waits for
// the step's attempt (and brings it forward) instead of failing at once with
// "next attempt in 0s". The caller holds mu.
func (b *bridge) newStepLocked() { b.step, b.early = make(chan struct{}), false }

// tellLoop hands the loop an outage's decision; once the loop has exited
// (the bridge is stopping) nobody reads the one-slot channel, and the
// decision is dropped instead of blocking the sender for good.
func (b *bridge) tellLoop(d Decision) {
	select {
	case b.outage <- d:
	case <-b.ctx.Done():
	}
}

// failed answers the requests of msg with text, and on an outage every
// other request in flight too ("requests in flight get errors at once"),
// then hands the outage to the loop. The requests in flight are taken before
// msg's answer is written: a request the client sends once it has read it
// meets the outage (not sent, "reconnecting"), and was answered as in flight
// when it came in between (TestWhileDown, 1 run in 30).
func (b *bridge) failed(msg message, d Decision, text string, data map[string]any) {
	var own, others []*call
	b.mu.Lock()
	msg.each(func(m message) {
		if !m.isRequest() {
			return
		}
		if c := b.take(m.id); c != nil {
			own = append(own, c)
		}
	})
	b.mu.Unlock()
	outage := d.Action == Reconnect || d.Action == GiveUp
	if outage {
		others = b.stopInFlight()
	}
	for _, c := range own {
		b.answer(c, text, data)
	}
	for _, c := range others {
		c.cancel()
		b.answer(c, fmt.Sprintf("mcpshim: server %s became unreachable before answering", b.cfg.Name), nil)
	}
	if outage {
		b.tellLoop(d)
	}
}

// stopInFlight ends the GET stream and takes every request in flight.
func (b *bridge) stopInFlight() []*call {
	b.mu.Lock()
	if b.getCancel != nil {
		b.getCancel()
		b.getCancel = nil
	}
	b.mu.Unlock()
	return b.takeAll()
}

// failureText is the error a request gets, and its data.
func (b *bridge) failureText(class Class, status int, resp *http.Response, err error, d Decision) (string, map[string]any) {
	data := map[string]any{"url": b.endpoint()}
	if status != 0 {
		data["http_status"] = status
	}
	text := fmt.Sprintf("mcpshim: server %s: %s (%s)", b.cfg.Name, d.Reason, b.scrub(describeStatus(status, err)))
	if why, sent := fault(err); class == Fault {
		text = fmt.Sprintf("mcpshim: server %s: %s; not sent", b.cfg.Name, b.scrub(why))
		if sent {
			text = fmt.Sprintf("mcpshim: server %s: %s; not re-sent, as it may have run", b.cfg.Name, b.scrub(why))
		}
	} else if class == Unreachable || class == TimedOut {
		text += "; not re-sent, as it may have run"
	}
	if resp != nil {
		if excerpt := bodyExcerpt(resp); excerpt != "" {
			data["body"] = b.scrub(excerpt)
		}
	}
	return text, data
}
