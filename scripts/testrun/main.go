// Command testrun is the README's test command: it runs go test with the
// arguments it is given and prints what go test prints without -v (each
// package's closing line, the output of failing tests), then every reason
// a test gave for skipping, once each with how many tests gave it, the
// count of tests passed, skipped and failed, and the wall time. Its exit
// code is go test's.
//
// go test shows skip reasons only under -v, so without this a run on a
// machine with no Postgres, RabbitMQ or Chromium reads like a full one.
//
//	go run ./scripts/testrun -race ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run("", os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json args in dir and returns the exit code.
func run(dir string, args []string, stdout, stderr io.Writer) int {
	began := time.Now()
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testrun:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testrun:", err)
		return 1
	}
	s := newSummary(stdout)
	readErr := s.read(events)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, events) // let go test finish
	}
	waitErr := cmd.Wait()
	s.close(time.Since(began))

	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		code = exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintln(stderr, "testrun:", waitErr)
		code = 1
	}
	if readErr != nil {
		fmt.Fprintln(stderr, "testrun: reading go test -json:", readErr)
	}
	if code == 0 && (readErr != nil || s.failed > 0) {
		code = 1
	}
	return code
}

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// reason is one distinct skip message.
type reason struct {
	text  string
	tests int
	first string // package and name of the first test that gave it
}

type summary struct {
	out                     io.Writer
	tests                   map[string][]string // output of each running test, by package and name
	pkgs                    map[string][]string // package-level output, by package
	reasons                 map[string]*reason
	passed, skipped, failed int
}

func newSummary(out io.Writer) *summary {
	return &summary{
		out:     out,
		tests:   map[string][]string{},
		pkgs:    map[string][]string{},
		reasons: map[string]*reason{},
	}
}

// closing matches go test's last line for a package: ok, FAIL or "?".
var closing = regexp.MustCompile(`^(ok  |FAIL|\?   )\t`)

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: a line go test printed itself. Pass it on.
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summary) handle(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Action == "output" && e.Test != "":
		s.tests[key] = append(s.tests[key], e.Output)
	case e.Action == "output":
		s.pkgs[e.Package] = append(s.pkgs[e.Package], e.Output)
	case e.Test != "" && e.Action == "pass":
		s.passed++
		delete(s.tests, key)
	case e.Test != "" && e.Action == "skip":
		s.skipped++
		s.skip(e.Package, e.Test, s.tests[key])
		delete(s.tests, key)
	case e.Test != "" && e.Action == "fail":
		s.failed++
		s.print(s.tests[key])
		delete(s.tests, key)
	case e.Test == "" && (e.Action == "pass" || e.Action == "skip" || e.Action == "fail"):
		s.endPackage(e.Package, e.Action == "fail")
	}
}

// endPackage prints the package's closing line and, when it failed,
// what else it printed: a panic, a timeout, the output of tests cut
// short.
func (s *summary) endPackage(pkg string, failed bool) {
	var closings, rest []string
	for _, l := range s.pkgs[pkg] {
		if closing.MatchString(l) {
			closings = append(closings, l)
		} else {
			rest = append(rest, l)
		}
	}
	if failed {
		var cut []string
		for key := range s.tests {
			if strings.HasPrefix(key, pkg+" ") {
				cut = append(cut, key)
			}
		}
		sort.Strings(cut)
		for _, key := range cut {
			s.print(s.tests[key])
			delete(s.tests, key)
		}
		s.print(rest)
	}
	s.print(closings)
	delete(s.pkgs, pkg)
}

// print writes lines of output, less the -v progress lines.
func (s *summary) print(lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		fmt.Fprint(s.out, l)
	}
}

// logLine matches a line of t.Log, t.Skip and friends: file:line: text.
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

// skip records the reason of a skipped test: the last line it logged
// before its --- SKIP line, which is t.Skip's message.
func (s *summary) skip(pkg, test string, output []string) {
	text := "(no reason given)"
	for _, l := range output {
		if strings.HasPrefix(l, "--- SKIP") {
			break
		}
		if m := logLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			text = m[1]
		}
	}
	r := s.reasons[text]
	if r == nil {
		r = &reason{text: text, first: pkg + " " + test}
		s.reasons[text] = r
	}
	r.tests++
}

// close prints the skip reasons, most frequent first, and the totals.
func (s *summary) close(wall time.Duration) {
	var rs []*reason
	for _, r := range s.reasons {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].tests != rs[j].tests {
			return rs[i].tests > rs[j].tests
		}
		return rs[i].text < rs[j].text
	})
	for _, r := range rs {
		noun := "tests"
		if r.tests == 1 {
			noun = "test"
		}
		fmt.Fprintf(s.out, "skip %4d %s: %s  (%s)\n", r.tests, noun, r.text, r.first)
	}
	fmt.Fprintf(s.out, "tests: %d passed, %d skipped, %d failed; wall time %s\n",
		s.passed, s.skipped, s.failed, wall.Round(100*time.Millisecond))
}
