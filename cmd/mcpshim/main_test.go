package main

import (
	"os"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// The binaries the tests build live until every test has run.
func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
