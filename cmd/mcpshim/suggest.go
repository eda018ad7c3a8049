package main

// subcommands are the words mcpshim takes before anything else, in the order
// help lists them.
var subcommands = []string{"ledger", "probe", "lock", "auth", "wrap", "unwrap", "demo", "fixture", "completion", "help", "version"}
