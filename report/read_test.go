package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/ledger/ledgertest"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// fleet writes ledgers of random shims: several at once per server, runs
// restarted, calls, late records after an end (within the window and past a
// day of other records), runs with no end, forged records, a rotated file
// and a torn line. It returns the files as ledger.Files lists them.
func fleet(t *testing.T, rng *rand.Rand) []string {
	t.Helper()
	dir := t.TempDir()
	events := []string{phases.InitializeReceived, phases.InitializeResponded, phases.ToolsListResponded, phases.ToolCallReceived,
		phases.ToolCallResponded, phases.StdoutNoise, phases.PendingFailed, phases.HandshakeTimeout, phases.KillRequested}
	for server := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("srv%d", server)
		var recs []ledger.Record
		at := ledgertest.T0
		for range 1 + rng.IntN(12) {
			shim := ledger.NewID("shim", at)
			prev := ""
			t0 := at.Add(time.Duration(rng.IntN(3600)) * time.Second)
			for gen := 1; gen <= 1+rng.IntN(3); gen++ {
				run := ledger.NewID("run", t0)
				add := func(event string, fields ...ledger.Field) {
					t0 = t0.Add(time.Duration(rng.IntN(90000)) * time.Millisecond)
					origin := ""
					if rng.IntN(40) == 0 {
						origin = phases.OriginServer // a server claiming a shim's event: forged
					}
					recs = append(recs, ledger.Record{Time: t0, Shim: shim, Run: run, Server: name, PID: 100 + gen, Origin: origin,
						Phase: ledgertest.PhaseOf(event), Event: event, Fields: fields})
				}
				start := []ledger.Field{ledger.F("generation", gen)}
				if prev != "" {
					start = append(start, ledger.F("previous_run", prev))
				}
				add(phases.SpawnRequested, start...)
				add(phases.Spawned)
				for range rng.IntN(6) {
					add(events[rng.IntN(len(events))], ledger.F("tool", "t"+fmt.Sprint(rng.IntN(3))), ledger.F("outcome", "success"),
						ledger.F("latency_ms", rng.IntN(900)), ledger.F("method", "tools/call"))
				}
				if rng.IntN(8) == 0 {
					break // no end: the shim was killed
				}
				add(phases.Exited, ledger.F("exit_code", rng.IntN(2)), ledger.F("handshake", rng.IntN(2) == 0))
				switch rng.IntN(6) {
				case 0:
					add(phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
				case 1:
					add(phases.RestartScheduled, ledger.F("attempt", gen))
				case 2:
					t0 = t0.Add(time.Duration(rng.IntN(23)) * time.Hour) // a long backoff, then the client left
					add(phases.ClientDisconnected, ledger.F("reason", "stdin_eof"))
				}
				prev = run
			}
			at = at.Add(time.Duration(rng.IntN(30)) * time.Hour)
		}
		slices.SortStableFunc(recs, func(a, b ledger.Record) int { return a.Time.Compare(b.Time) })
		var live, rotated bytes.Buffer
		cut := rng.IntN(len(recs) + 1)
		for i := range recs {
			recs[i].Seq = uint64(i + 1)
			if i < cut {
				recs[i].Encode(&rotated)
			} else {
				recs[i].Encode(&live)
			}
		}
		if rng.IntN(3) == 0 {
			rotated.WriteString(`{"ts":"2026-11-29T08:00:00Z","run":"run_torn","ev`) // a crash mid-line
		}
		path := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(path, live.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ledger.RotatedName(path, ledgertest.T0), rotated.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := ledger.Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestReadAsSummary: Read, which folds ledgers in parallel and forgets each
// run a day after its end, finds the same runs, counts and stats as one
// Summary that holds every run to the end.
func TestReadAsSummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	now := ledgertest.T0.Add(1000 * time.Hour)
	alive := func(pid int) bool { return pid%2 == 0 }
	for n := range 60 {
		files := fleet(t, rng)
		want := NewSummary()
		skipped := 0
		for _, path := range files {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sc := ledger.NewScanner(f)
			for sc.Scan() {
				want.Add(sc.Entry())
			}
			skipped += sc.Skipped()
			f.Close()
		}
		wantRuns := want.Runs(now, alive)
		for i := range wantRuns {
			want.Count(&wantRuns[i])
		}

		var mu sync.Mutex
		var got []Run
		store := &Store{}
		var wrongLedger []string
		res := Read(files, ReadOptions{Now: now, Alive: alive, IDs: true, Links: true, Run: func(r *Run, ledger []string) {
			store.Add(r)
			mu.Lock()
			got = append(got, *r)
			if filepath.Base(ledger[len(ledger)-1]) != r.Server+".jsonl" { // fleet writes a ledger per server
				wrongLedger = append(wrongLedger, fmt.Sprintf("%s of %s in %v", r.ID, r.Server, ledger))
			}
			mu.Unlock()
		}})
		if wrongLedger != nil {
			t.Fatalf("fleet %d: runs handed over with another ledger's files: %v", n, wrongLedger)
		}
		store.Sort()
		if len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		if res.Records != want.Records || res.Forged != want.Forged || res.Lost != want.Lost || res.Skipped != skipped {
			t.Fatalf("fleet %d: got records %d forged %d lost %d skipped %d, want %d %d %d %d", n,
				res.Records, res.Forged, res.Lost, res.Skipped, want.Records, want.Forged, want.Lost, skipped)
		}
		if store.Len() != len(wantRuns) || res.IDs.Len() != len(wantRuns) {
			t.Fatalf("fleet %d: got %d runs, %d ids, want %d", n, store.Len(), res.IDs.Len(), len(wantRuns))
		}
		for i := range wantRuns {
			var r Run
			store.Run(i, &r)
			r.NextRun = res.Next[r.ID]
			w := wantRuns[i]
			w.Answers = nil // not packed: json:"-"
			if !reflect.DeepEqual(r, w) {
				t.Fatalf("fleet %d, run %d:\ngot  %+v\nwant %+v", n, i, r, w)
			}
		}
		if g, w := res.Stats(), want.Stats(); !reflect.DeepEqual(g, w) {
			t.Fatalf("fleet %d: stats\ngot  %+v\nwant %+v", n, g, w)
		}

		// One server's runs alone are judged and kept; every run's id and
		// link is still found.
		var one []string
		oneRes := Read(files, ReadOptions{Now: now, Alive: alive, IDs: true, Links: true, Server: "srv0", Run: func(r *Run, _ []string) {
			mu.Lock()
			one = append(one, r.ID)
			mu.Unlock()
		}})
		var wantOne []string
		for _, r := range wantRuns {
			if r.Server == "srv0" {
				wantOne = append(wantOne, r.ID)
			}
		}
		slices.Sort(one)
		slices.Sort(wantOne)
		if !slices.Equal(one, wantOne) || oneRes.IDs.Len() != len(wantRuns) || !reflect.DeepEqual(oneRes.Next, res.Next) {
			t.Fatalf("fleet %d, Server srv0: got runs %v, %d ids, links %v; want runs %v, %d ids, links %v", n,
				one, oneRes.IDs.Len(), oneRes.Next, wantOne, len(wantRuns), res.Next)
		}
	}
}
