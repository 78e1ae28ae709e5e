package core

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refusedAs fails t unless err is of kind want; it says whether err is
// nil, so a property test can go on with an accepted input.
func refusedAs(t *testing.T, what string, err error, want Kind) bool {
	t.Helper()
	if err == nil {
		return false
	}
	if !IsKind(err, want) {
		t.Fatalf("%s: error of kind %v: %v", what, KindOf(err), err)
	}
	return true
}

// FuzzParseSearch: the q of GET /matches and the dashboard's search box
// (seeds from docs/api.md's examples of q). An accepted search holds 1 to
// MaxSearchTerms terms of words of search runes, one of them to find, and
// reads back the same when written out with each term quoted.
func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{
		`acme crm`, `"no show" -refund`, `-"free trial" pricing`, `-only`, `"unterminated`, `c++ #ai`,
		strings.Repeat("a ", 11), "é\u0301 日本", `""`, `- -`, "\xff\xfe", strings.Repeat("x", MaxSearchLen+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		s, err := ParseSearch(q)
		if refusedAs(t, "ParseSearch", err, KindInvalid) {
			return
		}
		if strings.TrimSpace(q) == "" {
			if !s.IsZero() {
				t.Fatalf("blank %q gave %v", q, s)
			}
			return
		}
		if len(s.Terms) < 1 || len(s.Terms) > MaxSearchTerms || len(s.Shown()) == 0 {
			t.Fatalf("ParseSearch(%q) = %v", q, s)
		}
		var parts []string
		for _, term := range s.Terms {
			if len(term.Words) == 0 {
				t.Fatalf("ParseSearch(%q): empty term", q)
			}
			for _, w := range term.Words {
				if w == "" || !utf8.ValidString(w) || strings.ContainsFunc(w, func(r rune) bool { return !IsSearchRune(r) }) {
					t.Fatalf("ParseSearch(%q): word %q", q, w)
				}
			}
			p := `"` + strings.Join(term.Words, " ") + `"`
			if term.Exclude {
				p = "-" + p
			}
			parts = append(parts, p)
		}
		written := strings.Join(parts, " ")
		if len(written) > MaxSearchLen {
			return
		}
		again, err := ParseSearch(written)
		if err != nil || !slices.EqualFunc(again.Terms, s.Terms, func(a, b SearchTerm) bool {
			return a.Exclude == b.Exclude && slices.Equal(a.Words, b.Words)
		}) {
			t.Fatalf("ParseSearch(%q) = %v, written %q reads %v, %v", q, s, written, again, err)
		}
	})
}

// FuzzNewPhraseFilters: a phrase's filters as PATCH /keywords/{id}/filters
// and the dashboard's form send them (seeds from docs/api.md's filters
// example). Accepted filters are bounded, hold no duplicate by the key
// each list is compared by, and pass a second time unchanged.
func FuzzNewPhraseFilters(f *testing.F) {
	f.Add("refund\nfree trial", "pricing", "u/spam_bot\n@Spammer", "r/SaaS\nmarketing", 5, 2, true)
	f.Add("", "", "", "", 0, 0, false)
	f.Add("a\x00b", "\xff", "/u/", "ab", -1, MaxFilterCount+1, false)
	f.Add("Joe’s\nJoe's\nＡＣＭＥ\nacme", "x\ny", "Ada  Lovelace\nada lovelace", "R/Golang\ngolang", MaxFilterCount, 1, true)
	f.Fuzz(func(t *testing.T, exclude, require, authors, communities string, likes, comments int, titleOnly bool) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, "\n")
		}
		in := PhraseFilters{split(exclude), split(require), split(authors), split(communities), likes, comments, titleOnly}
		got, err := NewPhraseFilters(in)
		if refusedAs(t, "NewPhraseFilters", err, KindInvalid) {
			return
		}
		lists := [][]string{got.Exclude, got.Require, got.ExcludeAuthors, got.ExcludeCommunities}
		keys := []func(string) string{FoldKey, FoldKey, caseKey, caseKey}
		for i, l := range lists {
			if l != nil && len(l) == 0 || len(l) > MaxFilterEntries {
				t.Fatalf("list %d of %+v: %q", i, in, l)
			}
			seen := map[string]bool{}
			for _, e := range l {
				if e == "" || utf8.RuneCountInString(e) > MaxPhraseLen || !utf8.ValidString(e) || strings.ContainsFunc(e, unicode.IsControl) {
					t.Fatalf("list %d of %+v: entry %q", i, in, e)
				}
				if k := keys[i](e); seen[k] {
					t.Fatalf("list %d of %+v: %q twice", i, in, e)
				} else {
					seen[k] = true
				}
			}
		}
		if got.MinLikes < 0 || got.MinLikes > MaxFilterCount || got.MinComments < 0 || got.MinComments > MaxFilterCount {
			t.Fatalf("minimums of %+v: %+v", in, got)
		}
		again, err := NewPhraseFilters(got)
		if err != nil || !slices.Equal(again.Exclude, got.Exclude) || !slices.Equal(again.Require, got.Require) ||
			!slices.Equal(again.ExcludeAuthors, got.ExcludeAuthors) || !slices.Equal(again.ExcludeCommunities, got.ExcludeCommunities) {
			t.Fatalf("second pass of %+v: %+v, %v", got, again, err)
		}
	})
}

// FuzzNewAlertSchedule: the frequency, hour and zone of PUT
// /account/alerts, the dashboard's account form and a channel's schedule
// (seeds from docs/api.md's examples). An accepted schedule is one of the
// four frequencies, with an hour of 0 to 23 and a zone that loads, and is
// accepted again as it is.
func FuzzNewAlertSchedule(f *testing.F) {
	for _, s := range []struct {
		freq string
		hour int
		zone string
	}{
		{"daily", 9, "Europe/Berlin"}, {"daily", 23, "+05:30"}, {"daily", 0, "-00:00"}, {"hourly", 0, ""},
		{"off", 0, ""}, {"", 0, ""}, {" daily ", 24, "UTC"}, {"daily", 8, "Local"}, {"daily", 8, "../etc/passwd"},
		{"daily", 8, "+1:30"}, {"daily", 8, "+-1:30"}, {"daily", 8, "+14:59"}, {"daily", 8, "America/Argentina/Buenos_Aires"},
	} {
		f.Add(s.freq, s.hour, s.zone)
	}
	f.Fuzz(func(t *testing.T, freq string, hour int, zone string) {
		s, err := NewAlertSchedule(freq, hour, zone)
		cs, cerr := NewChannelSchedule(freq, hour, zone)
		if refusedAs(t, "NewAlertSchedule", err, KindInvalid) {
			if cerr == nil {
				t.Fatalf("channel schedule %q %d %q accepted, alert schedule refused: %v", freq, hour, zone, err)
			}
			return
		}
		switch s.Frequency {
		case AlertAtOnce, AlertHourly, AlertDaily, AlertOff:
		default:
			t.Fatalf("NewAlertSchedule(%q, %d, %q) = %+v", freq, hour, zone, s)
		}
		if s.Hour < 0 || s.Hour > 23 || len(s.Zone) > len(zone) {
			t.Fatalf("NewAlertSchedule(%q, %d, %q) = %+v", freq, hour, zone, s)
		}
		if _, err := alertZone(s.Zone); err != nil {
			t.Fatalf("zone %q kept but does not load: %v", s.Zone, err)
		}
		if again, err := NewAlertSchedule(string(s.Frequency), s.Hour, s.Zone); err != nil || again != s {
			t.Fatalf("second pass of %+v: %+v, %v", s, again, err)
		}
		if (cerr == nil) != (s.Frequency != AlertOff) || cerr == nil && cs != s {
			t.Fatalf("channel schedule of %q %d %q: %+v, %v; alert schedule %+v", freq, hour, zone, cs, cerr, s)
		}
	})
}

// FuzzNewOwner: an owner's address and name as the sign-up form, the
// address change and the operator's command line send them (seeds from
// the spec's sign-up examples). An accepted address is lower case, at
// most MaxEmailLen bytes, has no domain literal, and passes again.
func FuzzNewOwner(f *testing.F) {
	for _, s := range [][2]string{
		{"ada@example.com", "Ada"}, {" Ada@Example.COM ", ""}, {"Ada <ada@example.com>", "x"}, {"ada@[10.0.0.5]", ""},
		{"\"a b\"@example.com", ""}, {"ada@example.com", "a\tb"}, {"a@b", "\xff"}, {"ȺȺȺ@example.com", ""},
		{strings.Repeat("a", 64) + "@" + strings.Repeat("b", 189) + ".c", ""},
		{strings.Repeat("Ⱥ", 32) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 50) + ".ex", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, email, name string) {
		o, err := NewOwner(email, name)
		if refusedAs(t, "NewOwner", err, KindInvalid) {
			return
		}
		if len(o.Email) > MaxEmailLen || o.Email != strings.ToLower(o.Email) || strings.Contains(o.Email, "@[") ||
			!utf8.ValidString(o.Name) || strings.ContainsFunc(o.Name, unicode.IsControl) || utf8.RuneCountInString(o.Name) > 200 {
			t.Fatalf("NewOwner(%q, %q) = %+v", email, name, o)
		}
		if again, err := NewOwner(o.Email, o.Name); err != nil || again != o {
			t.Fatalf("NewOwner(%q, %q) = %+v, which passes again as %+v, %v", email, name, o, again, err)
		}
	})
}

// FuzzKeyInputs: a key's name and scopes as POST /keys and the dashboard
// send them, and the secret of an Authorization header (seeds from
// docs/api.md's key examples). Accepted scopes are known and each once,
// and read back the same joined; an accepted name passes again; a secret's
// refusal never repeats it.
func FuzzKeyInputs(f *testing.F) {
	f.Add("read,write:phrases", "CI deploy", "ek_"+strings.Repeat("A", 43))
	f.Add(" read , ,read,webhooks", "", "eik_"+strings.Repeat("-", 43))
	f.Add("READ", "a\x00", "ek_")
	f.Add("write:phrases,admin", "\xff", "Bearer ek_x")
	f.Fuzz(func(t *testing.T, scopes, name, secret string) {
		sc, err := ParseScopes(scopes)
		if !refusedAs(t, "ParseScopes", err, KindInvalid) {
			if len(sc) > len(AllScopes) {
				t.Fatalf("ParseScopes(%q) = %v", scopes, sc)
			}
			written := make([]string, len(sc))
			for i, s := range sc {
				if !s.Valid() || slices.Contains(sc[:i], s) {
					t.Fatalf("ParseScopes(%q) = %v", scopes, sc)
				}
				written[i] = string(s)
			}
			if again, err := ParseScopes(strings.Join(written, ",")); err != nil || !slices.Equal(again, sc) {
				t.Fatalf("ParseScopes(%q) = %v, read back as %v, %v", scopes, sc, again, err)
			}
		}
		for _, kind := range []KeyKind{APIKey, IngestKey} {
			n, err := NormalizeKeyName(kind, name)
			if !refusedAs(t, "NormalizeKeyName", err, KindInvalid) {
				if utf8.RuneCountInString(n) > MaxKeyNameLen || !utf8.ValidString(n) || strings.ContainsFunc(n, unicode.IsControl) {
					t.Fatalf("NormalizeKeyName(%v, %q) = %q", kind, name, n)
				}
				if again, err := NormalizeKeyName(kind, n); err != nil || again != n {
					t.Fatalf("NormalizeKeyName second pass of %q: %q, %v", n, again, err)
				}
			}
			h, err := CheckSecret(kind, secret)
			if refusedAs(t, "CheckSecret", err, KindUnauthorized) {
				if len(secret) > 3 && strings.Contains(err.Error(), secret) {
					t.Fatalf("CheckSecret's refusal repeats the secret: %v", err)
				}
				continue
			}
			if h != HashSecret(secret) || !strings.HasPrefix(secret, kind.Prefix()) {
				t.Fatalf("CheckSecret(%v, %q) = %q", kind, secret, h)
			}
		}
	})
}

// FuzzParseRetrySchedule: EARSHOT_WEBHOOK_RETRY_SCHEDULE as an operator
// writes it (seeds from docs/configuration.md's example and its bounds).
// An accepted schedule has 1 to 20 waits of 10ms to 24h and reads back
// the same from its String.
func FuzzParseRetrySchedule(f *testing.F) {
	for _, s := range []string{"1m,5m,30m", "", " ", "10ms", "24h", "24h0m1s", "9ms", "1m,,5m", strings.Repeat("1s,", 20) + "1s", "1h30m, 2h", "-1m", "1e3s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRetrySchedule(s)
		if refusedAs(t, "ParseRetrySchedule", err, KindInvalid) {
			return
		}
		if len(rs) < 1 || len(rs) > maxRetries {
			t.Fatalf("ParseRetrySchedule(%q) = %v", s, rs)
		}
		for _, d := range rs {
			if d < minRetryWait || d > maxRetryWait {
				t.Fatalf("ParseRetrySchedule(%q) = %v", s, rs)
			}
		}
		if again, err := ParseRetrySchedule(rs.String()); err != nil || !slices.Equal(again, rs) {
			t.Fatalf("ParseRetrySchedule(%q) = %v, read back as %v, %v", s, rs, again, err)
		}
	})
}

// FuzzNewChannelTarget: a channel's kind, address, token and chat id as
// POST /channels and the dashboard send them (seeds in the shapes each
// service documents for its webhook addresses and tokens). An accepted
// target is a fixed point, its parts trimmed and bounded; no refusal
// repeats the token.
func FuzzNewChannelTarget(f *testing.F) {
	for _, s := range [][4]string{
		{"slack", "https://hooks.slack.com/services/T000/B000/XXXXXXXX", "", ""},
		{"discord", "https://discord.com/api/webhooks/123456/abcDEF-_", "", ""},
		{"discord", "https://canary.discordapp.com/api/v10/webhooks/1/t", "", ""},
		{"telegram", "", "123456:" + strings.Repeat("A", 35), "-1001234567890"},
		{"telegram", "", "123456:" + strings.Repeat("b", 35), "@channel_name"},
		{"ntfy", "https://ntfy.sh/earshot-alerts", "tk_" + strings.Repeat("a", 29), ""},
		{"ntfy", "https://ntfy.sh/a?b=c", "secret token", ""},
		{"webhook", "https://hooks.example.com/", "", ""},
		{"slack", "https://hooks.slack.com.evil.example/services/T/B/X", "", ""},
		{"telegram", "https://api.telegram.org/", "1:x", "1"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, kind, url, token, chatID string) {
		if _, err := ParseChannelKind(kind); err == nil != ChannelKind(kind).IsChannel() {
			t.Fatalf("ParseChannelKind(%q): %v", kind, err)
		}
		for _, allowPrivate := range []bool{false, true} {
			got, err := CheckChannelTarget(ChannelTarget{Kind: ChannelKind(kind), URL: url, Token: token, ChatID: chatID}, allowPrivate)
			if refusedAs(t, "CheckChannelTarget", err, KindInvalid) {
				if tok := strings.TrimSpace(token); len(tok) > 3 && strings.Contains(err.Error(), tok) {
					t.Fatalf("refusal repeats the token %q: %v", tok, err)
				}
				continue
			}
			if got.Kind != ChannelKind(kind) || len(got.URL) > MaxWebhookURLLen || len(got.Token) > MaxChannelTokenLen ||
				got.Token != strings.TrimSpace(got.Token) || got.ChatID != strings.TrimSpace(got.ChatID) {
				t.Fatalf("CheckChannelTarget(%q, %q, %q, %q) = %+v", kind, url, token, chatID, got)
			}
			if again, err := CheckChannelTarget(got, allowPrivate); err != nil || again != got {
				t.Fatalf("second pass of %+v: %+v, %v", got, again, err)
			}
		}
	})
}

// FuzzSmallParsers: a platform as every route's parameter names it, and an
// Idempotency-Key header (seeds from docs/api.md). Each takes exactly
// what its rule says and refuses the rest as invalid.
func FuzzSmallParsers(f *testing.F) {
	for _, s := range []string{"reddit", "x", "facebook", "Reddit", "", "req-2024-01-01:a.b_c", strings.Repeat("k", 65), "a b", "ключ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePlatform("platform", s)
		if !refusedAs(t, "ParsePlatform", err, KindInvalid) && (string(p) != s || !p.Valid()) {
			t.Fatalf("ParsePlatform(%q) = %q", s, p)
		}
		err = CheckIdempotencyKey(s)
		ok := len(s) >= 1 && len(s) <= 64 && !strings.ContainsFunc(s, func(r rune) bool {
			return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_.:-", r)))
		})
		if refusedAs(t, "CheckIdempotencyKey", err, KindInvalid) == ok {
			t.Fatalf("CheckIdempotencyKey(%q) = %v, want ok %v", s, err, ok)
		}
		if n, err := strconv.Atoi(s); err == nil {
			if _, err := CheckTrendDays(n); err != nil {
				refusedAs(t, "CheckTrendDays", err, KindInvalid)
			}
		}
	})
}
