package witness

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseServerEvent(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		want   ServerEvent
		wantOK bool
	}{
		{
			name: "logfmt",
			line: "run_id=run_01JX phase=execution event=external_attempt action_id=act_8Qf tool=issue_lookup channel=https host=api.example.test\n",
			want: ServerEvent{Phase: "execution", Event: "external_attempt", Fields: [][2]string{
				{"run_id", "run_01JX"}, {"action_id", "act_8Qf"}, {"tool", "issue_lookup"},
				{"channel", "https"}, {"host", "api.example.test"},
			}},
			wantOK: true,
		},
		{
			name:   "logfmt quoted values with escapes",
			line:   `phase=launch event=executable_ready msg="ready on \"stdio\"" note="tab\there" empty=""`,
			want:   ServerEvent{Phase: "launch", Event: "executable_ready", Fields: [][2]string{{"msg", `ready on "stdio"`}, {"note", "tab\there"}, {"empty", ""}}},
			wantOK: true,
		},
		{
			name:   "logfmt CRLF and tabs",
			line:   "phase=execution\tevent=external_result  status=200 duration_ms=184\r\n",
			want:   ServerEvent{Phase: "execution", Event: "external_result", Fields: [][2]string{{"status", "200"}, {"duration_ms", "184"}}},
			wantOK: true,
		},
		{
			name: "JSON keeps key order and value text",
			line: `{"event":"external_result","n":1.50,"ok":true,"nil":null,"tags":["a", "b"],"phase":"execution","obj":{"k": "v"}}`,
			want: ServerEvent{Phase: "execution", Event: "external_result", Fields: [][2]string{
				{"n", "1.50"}, {"ok", "true"}, {"nil", "null"}, {"tags", `["a","b"]`}, {"obj", `{"k":"v"}`},
			}},
			wantOK: true,
		},
		{
			name:   "JSON with surrounding space",
			line:   "  {\"phase\": \"launch\", \"event\": \"executable_ready\"}  \n",
			want:   ServerEvent{Phase: "launch", Event: "executable_ready"},
			wantOK: true,
		},
		{
			name: "secret-named fields are replaced whole",
			line: `phase=execution event=authorization_granted api_key=abc123 access_token="x y" password=hunter2 tokens=1500`,
			want: ServerEvent{Phase: "execution", Event: "authorization_granted", Fields: [][2]string{
				{"api_key", "[REDACTED]"}, {"access_token", "[REDACTED]"}, {"password", "[REDACTED]"}, {"tokens", "1500"},
			}},
			wantOK: true,
		},
		{
			name: "token-like values are redacted in any field",
			line: `{"phase":"execution","event":"external_attempt","header":"Authorization: Bearer abcdefgh12345678","url":"https://api.example.test/x?token=s3cret&page=2"}`,
			want: ServerEvent{Phase: "execution", Event: "external_attempt", Fields: [][2]string{
				{"header", "Authorization: [REDACTED]"}, {"url", "https://api.example.test/x?token=[REDACTED]&page=2"},
			}},
			wantOK: true,
		},
		{name: "plain text", line: "listening on stdio"},
		{name: "empty", line: "\n"},
		{name: "log prefix before pairs", line: "INFO phase=launch event=executable_ready"},
		{name: "timestamp prefix", line: "2026-07-22T14:03:13Z phase=launch event=executable_ready"},
		{name: "missing event", line: "phase=launch action_id=a"},
		{name: "missing phase", line: `{"event":"spawned"}`},
		{name: "empty phase", line: `phase="" event=spawned`},
		{name: "duplicate event", line: "phase=launch event=spawned event=exited"},
		{name: "unterminated quote", line: `phase=launch event=x msg="oops`},
		{name: "text glued to quote", line: `phase=launch event=x msg="a"b`},
		{name: "bad escape", line: `phase=launch event=x msg="\q"`},
		{name: "JSON phase not a string", line: `{"phase":1,"event":"x"}`},
		{name: "JSON event null", line: `{"phase":"launch","event":null}`},
		{name: "JSON array", line: `["phase","event"]`},
		{name: "JSON trailing text", line: `{"phase":"launch","event":"x"} extra`},
		{name: "JSON truncated", line: `{"phase":"launch","event":"x"`},
		{name: "too long", line: "phase=launch event=x pad=" + strings.Repeat("a", maxEventLine)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseServerEvent([]byte(tt.line))
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseServerEvent(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestLogfmtKeyIsTheRegexp proves logfmtKey accepts what ^[A-Za-z0-9_.-]+$ did.
func TestLogfmtKeyIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	for _, s := range []string{"", "a", "Z9", "host.name", "a_b-c.d", "a b", "a=b", "a\n", "\na", "é", "\xff", "key\x00", "k:v", "a/b", `"q"`, "-", "."} {
		if got, want := logfmtKey(s), re.MatchString(s); got != want {
			t.Errorf("logfmtKey(%q): got %v, want %v", s, got, want)
		}
	}
}
