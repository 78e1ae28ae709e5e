package gormstore

import (
	"context"

	"github.com/earshothq/earshot/ports"
)

var _ ports.ScoringBacklog = (*MatchStore)(nil)

// Unscored implements ports.ScoringBacklog. The inner LIMIT stops the
// count at limit rows of the partial index matches_unscored, which holds
// only the matches without a score, so a read costs the same however
// far scoring has fallen behind.
func (s *MatchStore) Unscored(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := s.db.with(ctx).Raw("SELECT COUNT(*) FROM (SELECT 1 FROM matches WHERE score IS NULL LIMIT ?) AS waiting", limit).Row().Scan(&n)
	return n, translate(err, "match")
}
