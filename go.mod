module github.com/mcpshim/mcpshim

go 1.26.8

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/oklog/run v1.2.0 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
