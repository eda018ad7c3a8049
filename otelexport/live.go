package otelexport

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// LiveOptions sizes the live exporter.
type LiveOptions struct {
	Queue      int           // records waiting to be mapped; default 4096
	BatchSize  int           // spans per export; default 512
	FlushEvery time.Duration // export what is ready at least this often; default 2s
	// Metrics, when set, receives the mcp.server.operation.duration
	// histogram of the requests the server answered, every MetricsEvery
	// (default 60s, the SDK's periodic reader's) and at Close, as Resource.
	Metrics      *Exporter
	MetricsEvery time.Duration
	Resource     *Resource
	// Base is the resource every span's starts from (BaseResource).
	Base []attribute.KeyValue
	// Full is Config.Full.
	Full bool
}

// LiveStats counts what became of a session's records.
type LiveStats struct {
	Dropped   uint64 // records that found the queue full (a slow or absent collector)
	Exported  uint64 // spans the collector took
	Failed    uint64 // spans whose export failed, or that came while a failed collector was left alone
	LastError string // the last export error
	// MetricsError is the last failed export of the duration histogram.
	MetricsError string
}

// Live streams a session's ledger records to an OTLP exporter. OnRecord is
// the ledger's hook: it copies the record onto a bounded queue and returns;
// when the queue is full the record is dropped and counted, never waited
// for. One goroutine maps the records to spans and exports them. After a
// failed export it leaves the queue alone for a while (1s, doubling to 30s)
// and then tries the first new span alone, so a collector that is down or
// stuck costs the session neither waiting nor CPU: the JSONL ledger stays
// the durable record.
type Live struct {
	exp      *Exporter
	opts     LiveOptions
	mapper   *Mapper    // owned by the loop
	duration *histogram // owned by the loop; nil without Metrics
	session  *histogram // likewise: mcp.server.session.duration, at Close
	// The session's last root span: its error.type and protocol are the
	// session's. Owned by the loop.
	lastRoot *Span

	queue    chan ledger.Record
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	ctx      context.Context // cancelled when Close runs out of time
	cancel   context.CancelFunc

	working bool          // the last export went through; owned by the loop
	backoff time.Duration // after a failed export
	retryAt time.Time

	dropped  atomic.Uint64
	exported atomic.Uint64
	failed   atomic.Uint64
	lastErr  atomic.Value // string
	// metricsErr is the last failed metrics export.
	metricsErr atomic.Value // string
}

// NewLive starts the exporting goroutine; Close stops it. exp nil is a
// session with metrics only: the spans are mapped for their durations and
// not sent.
func NewLive(exp *Exporter, opts LiveOptions) *Live {
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 512
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 2 * time.Second
	}
	if opts.MetricsEvery <= 0 {
		opts.MetricsEvery = time.Minute
	}
	l := &Live{exp: exp, opts: opts, mapper: NewMapper(opts.Base), queue: make(chan ledger.Record, opts.Queue),
		stop: make(chan struct{}), done: make(chan struct{})}
	l.mapper.full = opts.Full
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if opts.Metrics != nil {
		l.duration = newHistogram(durationName, durationDesc)
		l.session = newHistogram(sessionName, sessionDesc)
	}
	l.lastErr.Store("")
	l.metricsErr.Store("")
	// The root span says when the trace may be incomplete.
	l.mapper.rootAttrs = func() []attribute.KeyValue {
		if d := l.dropped.Load(); d > 0 {
			return []attribute.KeyValue{attribute.Int64(FieldPrefix+"otlp.records_dropped", int64(d))}
		}
		return nil
	}
	// The exporter: maps and sends records until Close stops it, after one
	// last export; Close waits for it.
	go l.loop()
	return l
}

// OnRecord hands one written record over. It never blocks: it is
// ledger.Options.OnRecord and runs on the recorder's goroutine.
func (l *Live) OnRecord(r *ledger.Record) {
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
		LastError: l.lastErr.Load().(string), MetricsError: l.metricsErr.Load().(string)}
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
	metricsTick := time.NewTicker(l.opts.MetricsEvery)
	defer metricsTick.Stop()
	var batch []*Span
	add := func(r *ledger.Record) {
		e := entryOf(r)
		spans := l.mapper.Add(&e)
		l.measure(spans)
		batch = append(batch, spans...)
		// Until an export has gone through, the first span goes alone: a
		// collector that is down is found out before much is mapped for it.
		if len(batch) >= l.opts.BatchSize || (!l.working && len(batch) > 0) {
			l.export(batch)
			batch = nil
		}
	}
	for {
		if wait := time.Until(l.retryAt); wait > 0 {
			// The collector failed: the queue fills and drops (counted) while
			// it is given time, rather than records being mapped for nothing.
			pause := time.NewTimer(wait)
			select {
			case <-pause.C:
			case <-l.stop:
				pause.Stop()
			}
		}
		select {
		case r := <-l.queue:
			add(&r)
		case <-tick.C:
			l.export(batch)
			batch = nil
		case <-metricsTick.C:
			l.exportMetrics()
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
			l.measureSession()
			l.retryAt = time.Time{} // one last try, within Close's time
			l.export(append(batch, spans...))
			l.exportMetrics()
			if l.exp != nil {
				_ = l.exp.Shutdown(l.ctx)
			}
			if l.opts.Metrics != nil {
				_ = l.opts.Metrics.Shutdown(l.ctx)
			}
			return
		}
	}
}

// export sends spans, or drops them while a failed collector is given time:
// converting spans for a collector that refuses them is CPU the relay shares.
func (l *Live) export(spans []*Span) {
	if len(spans) == 0 || l.exp == nil {
		return
	}
	if now := time.Now(); now.Before(l.retryAt) {
		l.failed.Add(uint64(len(spans)))
		return
	}
	if err := l.exp.ExportSpans(l.ctx, spans); err != nil {
		l.failed.Add(uint64(len(spans)))
		l.lastErr.Store(err.Error())
		l.working = false
		l.backoff = min(max(2*l.backoff, time.Second), 30*time.Second)
		l.retryAt = time.Now().Add(l.backoff)
		return
	}
	l.working, l.backoff, l.retryAt = true, 0, time.Time{}
	l.exported.Add(uint64(len(spans)))
}

// entryOf is r as ledger.Decode reads it back from the ledger line, without
// the round trip through JSON (a tenth of the cost): live spans equal batch
// ones.
func entryOf(r *ledger.Record) ledger.Entry {
	e := ledger.Entry{Time: r.Time.Round(0).UTC(), Shim: r.Shim, Run: r.Run, Seq: r.Seq, Server: r.Server, PID: r.PID,
		Origin: r.Origin, Phase: r.Phase, Event: r.Event, Fields: make(map[string]any, len(r.Fields))}
	for _, f := range r.Fields {
		switch f.Key {
		case "pid": // a field named like a common one replaces it, as in the line
			if n, ok := fieldValue(f.Value).(json.Number); ok {
				v, _ := n.Int64()
				e.PID = int(v)
			}
		case "ts", "shim", "run", "seq", "server", "origin", "phase", "event":
		default:
			e.Fields[f.Key] = fieldValue(f.Value)
		}
	}
	return e
}

// floatText formats v as the ledger's encoder does (encoding/json's rule:
// exponents only for the very small and very large, without padding).
func floatText(v float64) string {
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, v, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b = append(b[:n-2], b[n-1]) // e-07 -> e-7
	}
	return string(b)
}

// fieldValue is a Field's value as JSON decoding gives it back (see
// ledger.Field and Record.Encode).
func fieldValue(v any) any {
	switch v := v.(type) {
	case string, bool:
		return v
	case int:
		return json.Number(strconv.Itoa(v))
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case uint64:
		return json.Number(strconv.FormatUint(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'f', -1, 64) // the encoder writes these as strings
		}
		return json.Number(floatText(v))
	case time.Duration:
		return fieldValue(float64(v.Microseconds()) / 1000)
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case []ledger.Field:
		out := make(map[string]any, len(v))
		for _, f := range v {
			out[f.Key] = fieldValue(f.Value)
		}
		return out
	}
	return fmt.Sprint(v)
}

// measure adds the spans' durations to the histogram.
func (l *Live) measure(spans []*Span) {
	if l.duration == nil {
		return
	}
	l.duration.measure(spans)
	for _, s := range spans {
		if !s.Parent.IsValid() && s.SpanKind == trace.SpanKindInternal {
			l.lastRoot = s // a run's root: requests are SERVER or CLIENT
		}
	}
}

// measureSession records the session's duration, from the exporter's start
// (the shim's) to now, with error.type when its last run failed ("If and
// only if session ends with an error").
func (l *Live) measureSession() {
	if l.session == nil {
		return
	}
	attrs := []attribute.KeyValue{semconv.NetworkTransportPipe}
	if r := l.lastRoot; r != nil {
		for _, kv := range r.Attributes {
			if kv.Key == semconv.ErrorTypeKey || kv.Key == semconv.McpProtocolVersionKey {
				attrs = append(attrs, kv)
			}
		}
	}
	l.session.record(time.Since(l.session.start).Seconds(), attribute.NewSet(attrs...))
}

// exportMetrics sends the histogram so far, unless a failed collector is
// being given time (it runs on the loop, which must not wait on it). Its
// failure is the metrics' own (MetricsError): the spans' counts stay the spans'.
func (l *Live) exportMetrics() {
	if l.duration == nil || time.Now().Before(l.retryAt) {
		return
	}
	if err := l.opts.Metrics.exportMetrics(l.ctx, []*histogram{l.duration, l.session}, l.opts.Resource); err != nil {
		l.metricsErr.Store(err.Error())
	}
}
