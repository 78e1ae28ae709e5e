package ratelimit

import (
	"testing"

	"github.com/earshothq/earshot/testkit/limittest"
)

func TestContract(t *testing.T) { limittest.Run(t, NewMemory(nil)) }
