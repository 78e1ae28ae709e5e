package ports

import (
	"context"

	"github.com/earshothq/earshot/core"
)

// Scorer rates a match: score, intent and a one-line reason.
type Scorer interface {
	// Score returns the verdict on m. It may be slow (a remote model);
	// it honours ctx.
	Score(ctx context.Context, m core.Match) (core.Score, error)
}
