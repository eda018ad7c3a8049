package main

import (
	"flag"
	"fmt"

	"github.com/mcpshim-dev/mcpshim/cmdline"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// prune removes whole ledger files last written before the cutoff
// (ledger.Prune) and says which.
func (l *ledgerCmd) prune(args []string) int {
	var age string
	var dry bool
	paths, err := l.flags("prune", args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&age, "older-than", "", "remove files last written more than `AGE` ago (30d, 12h)")
		fs.BoolVar(&dry, "dry-run", false, "say what would be removed, remove nothing")
	})
	if err != nil {
		return usageStatus(err)
	}
	if age == "" {
		fmt.Fprintln(l.c.stderr, "mcpshim ledger prune: --older-than is required (e.g. --older-than 30d)")
		return exitUsage
	}
	d, err := cmdline.ParseAge(age)
	if err != nil {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger prune: --older-than %s: %v\n", age, err)
		return exitUsage
	}
	files, err := l.files(paths)
	if err != nil {
		return l.fail(err)
	}
	removed, kept, errs := ledger.Prune(files, l.now.Add(-d), dry)
	status := 0
	for _, err := range errs {
		fmt.Fprintf(l.c.stderr, "mcpshim ledger prune: %v\n", err)
		status = 1
	}
	out := struct {
		Removed []ledger.Removed `json:"removed"`
		Kept    int              `json:"kept"`
		DryRun  bool             `json:"dry_run"`
	}{removed, kept, dry}
	if l.json {
		if rc := l.writeJSON(out); rc != 0 {
			return rc
		}
		return status
	}
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	var total int64
	for _, r := range out.Removed {
		total += r.Bytes
		fmt.Fprintf(l.c.stdout, "%s %s (%s, last written %s)\n", verb, r.Path, sizeText(r.Bytes), r.Modified.In(l.loc).Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(l.c.stdout, "%s %s (%s); kept %d\n", verb, verdict.Plural(len(out.Removed), "file"), sizeText(total), out.Kept)
	return status
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
