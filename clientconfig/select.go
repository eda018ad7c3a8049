package clientconfig

// Selection is what a client starts of the entries it read: Claude Code's
// precedence, where the first entry of a name counts and later ones are
// shadowed, applied to any client's servers.
type Selection struct {
	Servers  []Server  // the entries that count and have no problem
	Problems []Problem // of the entries that count, of the files, of disabled entries
	Notes    []Note    // entries left out, in config order
}

// Note says why an entry is left out: Disabled, or shadowed by the entry of
// the same name in ShadowedBy that counts.
type Note struct {
	File, Server string
	Disabled     bool
	ShadowedBy   string
}

// Select picks the entries that count from servers, in precedence order (see
// ForProject). A shadowed entry's problem is not the selection's, and an
// entry that counts but has a problem is not in Servers.
func Select(servers []Server, problems []Problem) Selection {
	var sel Selection
	counts := map[string]string{} // server name -> the file of the entry that counts
	var used []Server
	for _, s := range servers {
		if s.Disabled {
			sel.Notes = append(sel.Notes, Note{File: s.File, Server: s.Name, Disabled: true})
			continue
		}
		if first, ok := counts[s.Name]; ok {
			sel.Notes = append(sel.Notes, Note{File: s.File, Server: s.Name, ShadowedBy: first})
			continue
		}
		counts[s.Name] = s.File
		used = append(used, s)
	}
	broken := map[[2]string]bool{}
	for _, p := range problems {
		if file, ok := counts[p.Server]; ok && file != p.File {
			continue
		}
		sel.Problems = append(sel.Problems, p)
		broken[[2]string{p.File, p.Server}] = true
	}
	for _, s := range used {
		if !broken[[2]string{s.File, s.Name}] {
			sel.Servers = append(sel.Servers, s)
		}
	}
	return sel
}
