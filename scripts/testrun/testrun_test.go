package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// runSample runs testrun on the module in testdata/sample, whose
// packages pass, skip, fail (when SAMPLE_FAIL is set) and have no tests.
func runSample(t *testing.T, fail bool) (string, int) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	t.Setenv("SAMPLE_FAIL", "")
	if fail {
		t.Setenv("SAMPLE_FAIL", "1")
	}
	var out, errs bytes.Buffer
	code := run("testdata/sample", []string{"-count=1", "./..."}, &out, &errs)
	t.Logf("stdout:\n%s\nstderr:\n%s", &out, &errs)
	return out.String(), code
}

func TestPassingRunNamesEverySkipReasonOnce(t *testing.T) {
	out, code := runSample(t, false)
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	// go test's own closing line of each package, as without -v.
	for _, want := range []string{
		"ok  \texample.com/sample/passes\t",
		"ok  \texample.com/sample/skips\t",
		"ok  \texample.com/sample/fails\t",
		"?   \texample.com/sample/notests\t[no test files]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Each reason once, with how many tests gave it, whatever was
	// logged before the skip.
	if n := strings.Count(out, "SAMPLE_POSTGRES_URL is unset: Postgres case skipped"); n != 1 {
		t.Errorf("the Postgres reason appears %d times, want once", n)
	}
	if !regexp.MustCompile(`(?m)^skip +3 tests?: SAMPLE_POSTGRES_URL is unset: Postgres case skipped`).MatchString(out) {
		t.Errorf("no line counting the 3 Postgres skips")
	}
	if !regexp.MustCompile(`(?m)^skip +1 tests?: SAMPLE_FAIL is unset: failing case skipped`).MatchString(out) {
		t.Errorf("no line for the failing case's skip")
	}
	// A passing test's log and the -v chatter stay hidden.
	for _, hidden := range []string{"a passing test's log", "a line logged before the skip", "=== RUN", "--- PASS", "--- SKIP"} {
		if strings.Contains(out, hidden) {
			t.Errorf("output shows %q, which go test without -v hides", hidden)
		}
	}
	if !regexp.MustCompile(`(?m)^tests: 4 passed, 4 skipped, 0 failed; wall time \S+$`).MatchString(out) {
		t.Errorf("no closing count and wall time")
	}
}

func TestFailingRunShowsTheFailureAndExitsNonZero(t *testing.T) {
	out, code := runSample(t, true)
	if code == 0 {
		t.Fatalf("exit code 0 for a run with a failing test")
	}
	for _, want := range []string{
		"--- FAIL: TestFails",
		"logged before the failure",
		"the failure",
		"FAIL\texample.com/sample/fails\t",
		"ok  \texample.com/sample/passes\t",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "=== RUN") {
		t.Errorf("output shows -v chatter")
	}
	if !regexp.MustCompile(`(?m)^tests: 4 passed, 3 skipped, 1 failed; wall time \S+$`).MatchString(out) {
		t.Errorf("no closing count and wall time")
	}
}

func TestBuildFailureShown(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/broken\n\ngo 1.26\n",
		"broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefinedName() }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	code := run(dir, []string{"./..."}, &out, &errs)
	all := out.String() + errs.String()
	if code == 0 {
		t.Fatalf("exit code 0 for a package that does not build:\n%s", all)
	}
	if !strings.Contains(all, "undefinedName") {
		t.Errorf("the compiler's message is not shown:\n%s", all)
	}
}
