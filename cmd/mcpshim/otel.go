package main

import (
	"flag"
	"runtime/debug"

	"github.com/mcpshim-dev/mcpshim/buildinfo"

	"github.com/mcpshim-dev/mcpshim/otelexport"
)

// otlpFlags are the OpenTelemetry flags of the shim and of ledger export.
type otlpFlags struct {
	endpoint string
	protocol string
}

func (f *otlpFlags) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&f.endpoint, "otlp", "", what+" as OpenTelemetry traces to the collector at `URL`, e.g. http://127.0.0.1:4318 (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&f.protocol, "otlp-protocol", "", "`PROTOCOL` of --otlp: http/protobuf, the only one built in (default $OTEL_EXPORTER_OTLP_PROTOCOL)")
}

// config is the collector the flags name, read with the command's
// environment (otelexport.Config.Resolve adds the standard variables).
func (f *otlpFlags) config(c *cli) otelexport.Config {
	return otelexport.Config{Endpoint: f.endpoint, Protocol: f.protocol, Getenv: c.getenv, Version: shimVersion}
}

// shimVersion is service.version: the version `mcpshim version` prints.
func shimVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return buildinfo.Read(buildinfo.Version{Version: version, Commit: commit, Date: date}, bi).Version
}
