package reddit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	atomfeed "github.com/mmcdole/gofeed/atom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// Bounds on a feed answer, checked before gofeed parses it. gofeed builds
// the whole document as a tree, recursing once per level of an element it
// does not know, so an answer without these bounds can take the process's
// memory or overflow its stack, which no recover catches. A reddit feed
// nests four deep (feed, entry, author, name), holds at most 100 entries
// (pageSize) of about a dozen elements and eight attributes each, and its
// posts are escaped text, not elements; a page of 100 posts of 30,000
// characters each, three quarters of reddit's limit for a post, is about
// 3.1 MB.
const (
	maxFeedBody     = 4 << 20
	maxFeedDepth    = 32
	maxFeedEntries  = pageSize
	maxFeedElements = 20_000 // elements and attributes together
	maxFeedError    = 200    // characters of gofeed's own error kept
)

// feedBound is a feed answer past one of the bounds above: a short text
// that names the bound, which the source health shows as the feed's
// refusal.
type feedBound string

func (b feedBound) Error() string { return string(b) }

// feedFailure is the failure of a feed answer that decodeFeed refused:
// the bound it broke, or that it is not a feed.
func feedFailure(err error, status int) *failure {
	reason := "answer is not a feed"
	var b feedBound
	if errors.As(err, &b) {
		reason = b.Error()
	}
	return &failure{reason: reason, status: status, cause: err}
}

// checkFeed refuses a feed answer past the bounds above, reading it as a
// stream of tokens with the decoder settings gofeed uses (lenient, any
// declared charset), so that it sees every element gofeed would. It keeps
// only counts, so its memory does not grow with the answer's depth.
func checkFeed(b []byte) error {
	if len(b) > maxFeedBody {
		return feedBound(fmt.Sprintf("answer is larger than %d MB", maxFeedBody>>20))
	}
	d := xml.NewDecoder(bytes.NewReader(withoutControlChars(b)))
	d.Strict = false
	d.CharsetReader = charset.NewReaderLabel
	depth, entries, elements := 0, 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// gofeed's decoder stops at the same token, so nothing past
			// it is parsed; gofeed reports the error itself.
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			elements += 1 + len(t.Attr)
			if depth > maxFeedDepth {
				return feedBound(fmt.Sprintf("answer nests deeper than %d elements", maxFeedDepth))
			}
			if elements > maxFeedElements {
				return feedBound(fmt.Sprintf("answer has more than %d elements and attributes", maxFeedElements))
			}
			if t.Name.Local == "entry" && depth == 2 {
				if entries++; entries > maxFeedEntries {
					return feedBound(fmt.Sprintf("answer has more than %d entries", maxFeedEntries))
				}
			}
		case xml.EndElement:
			depth--
		}
	}
}

// withoutControlChars drops the control characters gofeed drops before it
// parses (all below U+0020 but tab, line feed and carriage return), so
// that checkFeed reads the same document.
func withoutControlChars(b []byte) []byte {
	keep := func(c byte) bool { return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' }
	i := 0
	for i < len(b) && keep(b[i]) {
		i++
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)), b[:i]...)
	for _, c := range b[i:] {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// decodeFeed reads one page of a reddit Atom feed (/r/NAME/new/.rss or
// /r/NAME/comments/.rss) into entries. An entry's id is the fullname; its
// author is /u/NAME; its content is escaped HTML: the post's own text in
// <div class="md">, and for posts reddit's "submitted by /u/NAME [link]
// [comments]" trailer after it; its link is the permalink; published is
// when it was made. single is the community to credit an entry to when it
// names none. An answer that is not an Atom feed is an error; an entry
// that cannot be used is skipped (ok false, or left out when it has no
// id or time). A feed past the bounds of checkFeed is an error that names
// the bound.
func decodeFeed(b []byte, single string) ([]entry, error) {
	es, _, err := decodeFeedPage(b, single)
	return es, err
}

// decodeFeedPage is decodeFeed that also says how many entries the page
// held, usable or not: a page is the feed's end only when it held fewer
// than a full page, whatever was left out of it.
func decodeFeedPage(b []byte, single string) ([]entry, int, error) {
	if !bytes.Contains(b[:min(len(b), 4096)], []byte("<feed")) {
		// An HTML block page parses leniently as something; only a
		// document whose root is an Atom feed counts.
		return nil, 0, errors.New("no Atom feed element")
	}
	if err := checkFeed(b); err != nil {
		return nil, 0, err
	}
	f, err := (&atomfeed.Parser{}).Parse(bytes.NewReader(b))
	if err != nil {
		// A syntax error quotes the answer's own names, as long as they
		// come; the log keeps the start.
		return nil, 0, errors.New(core.Cut(err.Error(), maxFeedError))
	}
	out := make([]entry, 0, len(f.Entries))
	for _, e := range f.Entries {
		if e == nil {
			continue
		}
		kind, _, _ := strings.Cut(e.ID, "_")
		if kind != redditjson.KindPost && kind != redditjson.KindComment {
			continue
		}
		id, ok := redditjson.Fullname(kind, e.ID, "")
		if !ok {
			continue
		}
		created := feedTime(e.PublishedParsed, e.UpdatedParsed)
		if created.IsZero() {
			continue
		}
		var permalink string
		for _, l := range e.Links {
			if l != nil && (l.Rel == "" || l.Rel == "alternate") && l.Href != "" {
				permalink = l.Href
				break
			}
		}
		sub := feedCommunity(e, permalink)
		if sub == "" {
			sub = single
		}
		author := ""
		if len(e.Authors) > 0 && e.Authors[0] != nil {
			author = strings.TrimPrefix(strings.TrimSpace(e.Authors[0].Name), "/u/")
		}
		text := ""
		if e.Content != nil {
			text = plainText(e.Content.Value)
		}
		en := entry{id: id, created: created, sortable: true}
		en.post.Community = sub
		if author == "" || redditjson.Gone(author) || redditjson.Gone(text) || sub == "" {
			out = append(out, en)
			continue
		}
		link := permalink
		if !strings.HasPrefix(link, redditjson.PublicSite+"/") || strings.ContainsAny(link, " \t\r\n\\") {
			link = linkFromFeed(kind, id, sub, permalink)
		}
		p := core.Post{
			ExternalID: id,
			Author:     author,
			Text:       core.Cut(text, maxText),
			URL:        link,
			PostedAt:   created,
		}
		// A comment's feed title is "/u/NAME on POST TITLE": the post's
		// title, which is not matched for a comment (see item.post).
		if kind == redditjson.KindPost {
			p.Title = core.Cut(strings.TrimSpace(e.Title), core.MaxPostText)
		}
		en.post = ports.RedditPost{Post: p, Community: sub, CreatedAt: created}
		en.ok = true
		out = append(out, en)
	}
	return out, len(f.Entries), nil
}

func feedTime(ts ...*time.Time) time.Time {
	for _, t := range ts {
		if t != nil && !t.IsZero() && t.Year() >= 2005 && t.Year() < 5000 {
			return t.UTC()
		}
	}
	return time.Time{}
}

// feedCommunity is the entry's subreddit: its category term, which reddit
// sets to the subreddit on every entry, or the /r/NAME/ of its permalink.
func feedCommunity(e *atomfeed.Entry, permalink string) string {
	for _, c := range e.Categories {
		if c == nil {
			continue
		}
		if name := strings.ToLower(strings.TrimPrefix(c.Term, "r/")); validCommunity(name) {
			return name
		}
	}
	if u, err := url.Parse(permalink); err == nil {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) >= 2 && parts[0] == "r" {
			if name := strings.ToLower(parts[1]); validCommunity(name) {
				return name
			}
		}
	}
	return ""
}

// linkFromFeed builds the post's address when the permalink is missing or
// not on reddit.
func linkFromFeed(kind, id, sub, permalink string) string {
	if u, err := url.Parse(permalink); err == nil && strings.HasPrefix(u.Path, "/r/") && !strings.ContainsAny(u.Path, " \t\r\n\\") {
		return redditjson.PublicSite + u.Path
	}
	return link(kind, id, sub, "", "")
}

// plainText turns the HTML of a feed entry into the text its author
// wrote: tags removed, entities decoded, paragraphs and line breaks kept as
// line breaks. Only the <div class="md"> body counts when there is one;
// without one (a link post), the text is what comes before reddit's
// "submitted by" trailer, which is nothing the author wrote.
func plainText(h string) string {
	var all, md strings.Builder
	inMD, mdDepth, sawMD := false, 0, false
	z := html.NewTokenizer(strings.NewReader(h))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF at the end; a broken tail keeps what came before
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken:
			if inMD {
				if tok.DataAtom == atom.Div {
					mdDepth++
				}
				breakBefore(&md, tok.DataAtom)
				continue
			}
			if tok.DataAtom == atom.Div && hasClass(tok, "md") && !sawMD {
				inMD, mdDepth, sawMD = true, 1, true
				continue
			}
			breakBefore(&all, tok.DataAtom)
		case html.SelfClosingTagToken:
			if inMD {
				breakBefore(&md, tok.DataAtom)
			} else {
				breakBefore(&all, tok.DataAtom)
			}
		case html.EndTagToken:
			if inMD && tok.DataAtom == atom.Div {
				mdDepth--
				if mdDepth == 0 {
					inMD = false
				}
			}
			if inMD {
				breakBefore(&md, tok.DataAtom)
			}
		case html.TextToken:
			if inMD {
				md.WriteString(tok.Data)
			} else {
				all.WriteString(tok.Data)
			}
		}
	}
	if sawMD {
		return tidy(md.String())
	}
	text := all.String()
	if i := strings.LastIndex(text, "submitted by"); i >= 0 {
		text = text[:i]
	}
	return tidy(text)
}

// breakBefore keeps block boundaries as line breaks, so words of two
// paragraphs do not run together and phrases never match across them.
func breakBefore(b *strings.Builder, a atom.Atom) {
	switch a {
	case atom.P, atom.Br, atom.Div, atom.Li, atom.Tr, atom.Blockquote, atom.Pre, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Hr, atom.Table, atom.Ul, atom.Ol:
		b.WriteByte('\n')
	}
}

func hasClass(t html.Token, class string) bool {
	for _, a := range t.Attr {
		if a.Key == "class" {
			for _, c := range strings.Fields(a.Val) {
				if c == class {
					return true
				}
			}
		}
	}
	return false
}

// tidy trims each line and drops empty ones, so the text reads as the
// author's markdown did rather than as the HTML's white space.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
