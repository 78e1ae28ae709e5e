package skips

import "testing"

func TestNeedsPostgres(t *testing.T) {
	t.Log("a line logged before the skip")
	t.Skip("SAMPLE_POSTGRES_URL is unset: Postgres case skipped")
}

func TestCases(t *testing.T) {
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Skip("SAMPLE_POSTGRES_URL is unset: Postgres case skipped")
		})
	}
}

func TestRuns(t *testing.T) {}
