package main

// fatalServer reads a line, says why it cannot go on, on stderr (CRLF, as
// cmd.exe ends lines), and exits 1.
var fatalServer = []string{"cmd", "/c", "set /p line=&>&2 echo fatal: missing API key&exit 1"}
