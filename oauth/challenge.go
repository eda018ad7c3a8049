package oauth

import (
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110 §11.6.1):
// a scheme and its parameters, names lower-cased.
type Challenge struct {
	Scheme string
	Params map[string]string
}

// Param returns the parameter name of the challenge, "" when absent.
func (c Challenge) Param(name string) string { return c.Params[name] }

// Bearer returns the Bearer challenge among the values of the
// WWW-Authenticate headers of a response, and whether there was one.
//
// RFC 9728 §5.1: "resource_metadata: The URL of the protected resource
// metadata." RFC 6750 §3: the scope and error attributes.
//
// A server that binds tokens to keys may challenge with the DPoP scheme
// alone (RFC 9449 §7.1), with the same parameters: it is taken when there is
// no Bearer challenge.
func Bearer(headers []string) (Challenge, bool) {
	var dpop *Challenge
	for _, h := range headers {
		for _, c := range ParseChallenges(h) {
			if strings.EqualFold(c.Scheme, "Bearer") {
				return c, true
			}
			if strings.EqualFold(c.Scheme, "DPoP") && dpop == nil {
				dpop = &c
			}
		}
	}
	if dpop != nil {
		return *dpop, true
	}
	return Challenge{}, false
}

// ParseChallenges reads a WWW-Authenticate value: challenges separated by
// commas, each a scheme followed by a token68 or by name=value parameters,
// values tokens or quoted strings with backslash escapes. It never fails: what
// it cannot read it skips.
func ParseChallenges(h string) []Challenge {
	var out []Challenge
	p := &challengeParser{s: h}
	for {
		p.skip(" \t,")
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // a stray character
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		for {
			p.skip(" \t")
			if !p.paramAhead() {
				p.skipUntil(',') // a token68, or nothing
				break
			}
			name := p.token()
			p.skip(" \t")
			p.i++ // '='
			p.skip(" \t")
			c.Params[strings.ToLower(name)] = p.value()
			p.skip(" \t")
			if p.done() || p.s[p.i] != ',' {
				break
			}
			p.skip(" \t,")
			if !p.paramAhead() {
				break // the next challenge's scheme
			}
		}
		out = append(out, c)
	}
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *challengeParser) skipUntil(b byte) {
	for p.i < len(p.s) && p.s[p.i] != b {
		p.i++
	}
}

// tchar is RFC 9110's token character.
func tchar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~/", b) >= 0
}

func (p *challengeParser) token() string {
	start := p.i
	for p.i < len(p.s) && tchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// paramAhead tells whether "name = value" follows, without consuming it:
// a token68 such as "abc==" has no value after its first '='.
func (p *challengeParser) paramAhead() bool {
	save := p.i
	defer func() { p.i = save }()
	if p.token() == "" {
		return false
	}
	p.skip(" \t")
	if p.done() || p.s[p.i] != '=' {
		return false
	}
	p.i++
	p.skip(" \t")
	return !p.done() && (p.s[p.i] == '"' || tchar(p.s[p.i]))
}

func (p *challengeParser) value() string {
	if p.done() || p.s[p.i] != '"' {
		return p.token()
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
