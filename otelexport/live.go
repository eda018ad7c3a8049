package otelexport

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpshim/mcpshim/phases"
)

// LiveOptions sizes the live exporter.
type LiveOptions struct {
	Queue      int           // records waiting to be mapped; default 4096
	BatchSize  int           // spans per export; default 512
	FlushEvery time.Duration // export what is ready at least this often; default 2s
	// Meter, when set, records the mcp.server.operation.duration histogram
	// of the requests the server answered.
	Meter metric.Meter
}

// LiveStats counts what became of a session's records.
type LiveStats struct {
	Dropped   uint64 // records that found the queue full (a slow or absent collector)
	Exported  uint64 // spans the collector took
	Failed    uint64 // spans whose export failed
	LastError string // the last export error
}

// Live streams a session's ledger records to an OTLP exporter. OnRecord is
// the ledger's hook: it copies the record onto a bounded queue and returns;
// when the queue is full the record is dropped and counted, never waited
// for. One goroutine maps the records to spans and exports them, so a slow
// or absent collector costs the session nothing: the JSONL ledger stays the
// durable record.
type Live struct {
	exp      sdktrace.SpanExporter
	opts     LiveOptions
	mapper   *Mapper // owned by the loop
	duration mcpconv.ServerOperationDuration

	queue    chan phases.Record
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	ctx      context.Context // cancelled when Close runs out of time
	cancel   context.CancelFunc

	dropped  atomic.Uint64
	exported atomic.Uint64
	failed   atomic.Uint64
	lastErr  atomic.Value // string
}

// NewLive starts the exporting goroutine; Close stops it.
func NewLive(exp sdktrace.SpanExporter, opts LiveOptions) *Live {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 512
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 2 * time.Second
	}
	l := &Live{exp: exp, opts: opts, mapper: NewMapper(), queue: make(chan phases.Record, opts.Queue),
		stop: make(chan struct{}), done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	// A nil Meter gives a no-op histogram; an instrument error leaves one too.
	l.duration, _ = mcpconv.NewServerOperationDuration(opts.Meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	l.lastErr.Store("")
	// The root span says when the trace may be incomplete.
	l.mapper.rootAttrs = func() []attribute.KeyValue {
		if d := l.dropped.Load(); d > 0 {
			return []attribute.KeyValue{attribute.Int64(FieldPrefix+"otlp.records_dropped", int64(d))}
		}
		return nil
	}
	go l.loop()
	return l
}

// OnRecord hands one written record over. It never blocks: it is
// phases.LedgerOptions.OnRecord and runs on the recorder's goroutine.
func (l *Live) OnRecord(r *phases.Record) {
	select {
	case <-l.stop:
		l.dropped.Add(1)
		return
	default:
	}
	select {
	case l.queue <- *r: // the ledger never touches a record after writing it
	default:
		l.dropped.Add(1)
	}
}

// Stats reports the counts so far.
func (l *Live) Stats() LiveStats {
	return LiveStats{Dropped: l.dropped.Load(), Exported: l.exported.Load(), Failed: l.failed.Load(),
		LastError: l.lastErr.Load().(string)}
}

// Close maps what is queued, ends the runs still open, exports the rest and
// shuts the exporter down. When ctx ends first the export in flight is
// abandoned: a session's exit never waits on a collector.
func (l *Live) Close(ctx context.Context) error {
	l.stopOnce.Do(func() { close(l.stop) })
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		l.cancel()
		<-l.done
		return ctx.Err()
	}
}

func (l *Live) loop() {
	defer close(l.done)
	defer l.cancel()
	tick := time.NewTicker(l.opts.FlushEvery)
	defer tick.Stop()
	var (
		buf   bytes.Buffer
		batch []sdktrace.ReadOnlySpan
	)
	add := func(r *phases.Record) {
		// Through the ledger's own encoding, so live spans equal batch ones.
		buf.Reset()
		r.Encode(&buf)
		e, err := phases.Decode(buf.Bytes())
		if err != nil {
			return
		}
		spans := l.mapper.Add(&e)
		l.measure(spans)
		batch = append(batch, spans...)
		if len(batch) >= l.opts.BatchSize {
			l.export(batch)
			batch = nil
		}
	}
	for {
		select {
		case r := <-l.queue:
			add(&r)
		case <-tick.C:
			l.export(batch)
			batch = nil
		case <-l.stop:
			for drained := false; !drained; {
				select {
				case r := <-l.queue:
					add(&r)
				default:
					drained = true
				}
			}
			spans := l.mapper.Finish()
			l.measure(spans)
			l.export(append(batch, spans...))
			_ = l.exp.Shutdown(l.ctx)
			return
		}
	}
}

func (l *Live) export(spans []sdktrace.ReadOnlySpan) {
	if len(spans) == 0 {
		return
	}
	if err := l.exp.ExportSpans(l.ctx, spans); err != nil {
		l.failed.Add(uint64(len(spans)))
		l.lastErr.Store(err.Error())
		return
	}
	l.exported.Add(uint64(len(spans)))
}

// durationBuckets are the MCP conventions' advice for the operation
// duration histogram, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// durationKeys are the span attributes the histogram keeps: the
// low-cardinality ones the conventions list for it.
var durationKeys = map[attribute.Key]bool{semconv.ErrorTypeKey: true, semconv.GenAIToolNameKey: true,
	semconv.McpProtocolVersionKey: true, semconv.NetworkTransportKey: true, semconv.RPCResponseStatusCodeKey: true,
	semconv.GenAIOperationNameKey: true}

// measure records the duration of each request the server answered.
func (l *Live) measure(spans []sdktrace.ReadOnlySpan) {
	if l.opts.Meter == nil {
		return
	}
	for _, s := range spans {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		var method string
		attrs := make([]attribute.KeyValue, 0, len(durationKeys))
		for _, kv := range s.Attributes() {
			switch {
			case kv.Key == semconv.McpMethodNameKey:
				method = kv.Value.AsString()
			case durationKeys[kv.Key]:
				attrs = append(attrs, kv)
			}
		}
		l.duration.Record(context.Background(), s.EndTime().Sub(s.StartTime()).Seconds(), mcpconv.MethodNameAttr(method), attrs...)
	}
}
