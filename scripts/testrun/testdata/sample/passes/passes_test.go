package passes

import "testing"

func TestPasses(t *testing.T) { t.Log("a passing test's log stays hidden") }
