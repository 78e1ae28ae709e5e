package facebook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParsePage hands the parsers any page document and GraphQL answer,
// seeded with the fixtures of testdata/ (their shapes are described in
// testdata/README.md) and hostile variants, and checks what they
// promise: each story kept once, with an id, a text and a creation time
// within (0, maxCreated], counts within 0 to 2^31-1; each group once,
// with an id and a name; and a body whose stories are read is one that
// hasResults says holds results, so that a page waiting on them ends.
func FuzzParsePage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	var docs, answers [][]byte
	for _, name := range files {
		if strings.HasSuffix(name, ".md") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(name, ".html") {
			docs = append(docs, b)
		} else {
			answers = append(answers, b)
		}
	}
	if len(docs) == 0 || len(answers) == 0 {
		f.Fatal("no fixture in testdata/")
	}
	for _, d := range docs {
		f.Add(d, []byte(nil))
	}
	for _, a := range answers {
		f.Add([]byte(nil), a)
	}
	f.Add(docs[0], answers[0])
	for _, a := range []string{
		`for (;;);{"post_id":"1","message":{"text":"t"},"creation_time":1e300}`,
		`{"post_id":12345678901234567890123,"message":{"text":"t"},"creation_time":"1700000000","reaction_count":{"count":-1},"comments":{"total_count":1e40}}`,
		`{"post_id":1.5e3,"message":{"text":"t"},"creation_time":1700000000}` + "\n" + `{"post_id":"1500","message":{"text":"u"},"creation_time":1}`,
		`{"__typename":"Group","id":"7","name":"g","viewer_join_state":"CAN_JOIN","x":{"__typename":"Group","id":7,"name":"h"}}`,
		`{"tab_groups_list":{"edges":[]}}{"serpResponse":{"results":{"edges":[]}}}`,
		`{"post_id":"1","a":{"post_id":"2","a":{"post_id":"3","message":{"text":"t"},"creation_time":5}}}`,
		`for (;;);for (;;);[` + strings.Repeat(`{"post_id":"1"},`, 50) + `0]`,
	} {
		f.Add([]byte(nil), []byte(a))
	}
	f.Add([]byte(`<script type="application/json" data-sjs>{"__bbox":{"post_id":"9","message":{"text":"t"},"creation_time":9}}</script><script`), []byte(nil))
	f.Add([]byte(`<script data-sjs type="application/json"`+strings.Repeat(">", 3)+`"__bbox"</script>`), []byte(nil))
	f.Fuzz(func(t *testing.T, doc, answer []byte) {
		stories := parsePage(doc, [][]byte{answer})
		seen := map[string]bool{}
		for _, s := range stories {
			if s.id == "" || s.text == "" || s.created <= 0 || s.created > maxCreated {
				t.Errorf("a story without id, text or a plausible time: %+v", s)
			}
			if s.likes < 0 || s.comments < 0 || s.likes > 1<<31-1 || s.comments > 1<<31-1 {
				t.Errorf("counts %d, %d", s.likes, s.comments)
			}
			if seen[s.id] {
				t.Errorf("story %q twice", s.id)
			}
			seen[s.id] = true
		}
		if bytes.Contains(answer, []byte(`"post_id"`)) && len(parseAnswers([][]byte{answer})) > 0 && !hasResults(answer) {
			t.Errorf("stories read from an answer hasResults says holds none")
		}
		groups := parseGroups(doc, [][]byte{answer})
		ids := map[string]bool{}
		for _, g := range groups {
			if g.ID == "" || g.Name == "" || ids[g.ID] {
				t.Errorf("a group without id or name, or twice: %+v", g)
			}
			ids[g.ID] = true
		}
		_ = hasGroups(answer)
		_ = pageHolds(doc, nil, hasResults)
	})
}
