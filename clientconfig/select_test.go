package clientconfig

import (
	"fmt"
	"testing"
)

func TestSelect(t *testing.T) {
	srv := func(file, name string) Server { return Server{File: file, Name: name, Type: "stdio"} }
	off := func(s Server) Server { s.Disabled = true; return s }
	prob := func(file, name string) Problem { return Problem{File: file, Server: name, Msg: "${TOKEN} is not set"} }
	tests := []struct {
		name     string
		servers  []Server
		problems []Problem
		want     Selection
	}{
		{"nothing", nil, nil, Selection{}},
		{"one of each name", []Server{srv("a", "fs"), srv("a", "git")}, nil,
			Selection{Servers: []Server{srv("a", "fs"), srv("a", "git")}}},
		{"the first of a name counts", []Server{srv("proj", "fs"), srv("user", "fs")}, nil,
			Selection{Servers: []Server{srv("proj", "fs")}, Notes: []Note{{File: "user", Server: "fs", ShadowedBy: "proj"}}}},
		{"a disabled entry is left out and shadows nothing", []Server{off(srv("a", "fs")), srv("b", "fs")}, nil,
			Selection{Servers: []Server{srv("b", "fs")}, Notes: []Note{{File: "a", Server: "fs", Disabled: true}}}},
		{"a problem keeps its entry out", []Server{srv("a", "fs"), srv("a", "git")}, []Problem{prob("a", "fs")},
			Selection{Servers: []Server{srv("a", "git")}, Problems: []Problem{prob("a", "fs")}}},
		{"a shadowed entry's problem is not the selection's", []Server{srv("proj", "fs"), srv("user", "fs")}, []Problem{prob("user", "fs")},
			Selection{Servers: []Server{srv("proj", "fs")}, Notes: []Note{{File: "user", Server: "fs", ShadowedBy: "proj"}}}},
		{"the counting entry's problem shadows still", []Server{srv("proj", "fs"), srv("user", "fs")}, []Problem{prob("proj", "fs")},
			Selection{Problems: []Problem{prob("proj", "fs")}, Notes: []Note{{File: "user", Server: "fs", ShadowedBy: "proj"}}}},
		{"a file's problem and a disabled entry's are kept", []Server{off(srv("a", "fs"))}, []Problem{prob("b", ""), prob("a", "fs")},
			Selection{Problems: []Problem{prob("b", ""), prob("a", "fs")}, Notes: []Note{{File: "a", Server: "fs", Disabled: true}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Select(tc.servers, tc.problems)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Select(%v, %v):\n got %+v\nwant %+v", tc.servers, tc.problems, got, tc.want)
			}
		})
	}
}
