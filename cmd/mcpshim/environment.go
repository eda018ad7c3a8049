package main

// environment is the one table of the variables mcpshim reads: `mcpshim help`
// prints it, the man page's ENVIRONMENT section is it, and the README has the
// same rows. MCPSHIM_* are the flags people set once per machine; a flag
// given on the command line wins over its variable.
const environment = `Environment (a flag given wins over its variable):
  MCPSHIM_LEDGER      --ledger of the shim, and the PATH mcpshim ledger reads
                      by default (a file or a directory; off: none)
  MCPSHIM_NAME        --name
  MCPSHIM_LOG_FORMAT  --log-format: text or json
  MCPSHIM_CAPTURE     --capture: meta or full
  MCPSHIM_COLOR       --color of the shim and of mcpshim ledger: auto, always
                      or never
  NO_COLOR            no colour with --color auto (no-color.org)
  FORCE_COLOR         colour with --color auto even in a pipe or a file
                      (force-color.org); NO_COLOR wins over it
  XDG_STATE_HOME      the ledgers' directory is $XDG_STATE_HOME/mcpshim
  TZ, COLUMNS         the zone and the width mcpshim ledger shows times and
                      tables in
`
