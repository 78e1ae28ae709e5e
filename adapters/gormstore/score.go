package gormstore

import (
	"context"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// SetScores implements ports.MatchStore. Scoring keeps up with ingest by
// storing its verdicts in batches: one transaction, the scores stored as
// setScores does (which says for each whether it was the first score,
// so no row is read back), one read of webhooks per owner and one
// multi-row insert of the deliveries the plan asks for. The store only
// keeps it atomic; the plan decides.
func (s *MatchStore) SetScores(ctx context.Context, updates []ports.ScoreUpdate, plan ports.DeliveryPlan) ([]core.Match, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	var out []core.Match
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		out = out[:0]
		now := tx.NowFunc()
		first, err := s.setScores(tx, updates, now.UnixMicro())
		if err != nil {
			return err
		}
		for i, u := range updates {
			if first[i] {
				m, sc := u.Match, u.Score
				m.Score = &sc
				out = append(out, m)
			}
		}
		if err := s.db.countScored(tx, out, now); err != nil {
			return err
		}
		if plan == nil || len(out) == 0 {
			return nil
		}
		hooks := map[string][]core.Webhook{}
		var queued []deliveryRow
		for _, m := range out {
			hs, ok := hooks[m.OwnerID]
			if !ok {
				var rows []webhookRow
				if err := tx.Where("owner_id = ?", m.OwnerID).Order("created_at, id").Find(&rows).Error; err != nil {
					return err
				}
				for _, r := range rows {
					hs = append(hs, r.webhook())
				}
				hooks[m.OwnerID] = hs
			}
			for _, d := range plan(m, hs, now) {
				if d.ID == "" {
					d.ID = newID()
				}
				r := newDeliveryRow(d)
				r.MatchID = m.ID
				queued = append(queued, r)
			}
		}
		if len(queued) == 0 {
			return nil
		}
		return tx.CreateInBatches(&queued, 1000).Error
	})
	if err != nil {
		return nil, translate(err, "match")
	}
	return out, nil
}

// setScores stores each update's score where its match had none and
// reports which did, in one statement for the batch: an UPDATE per match
// was a round trip each on Postgres while the transaction held the rows
// updated before it (docs/adr/0005-scoring-in-batches.md). A match named
// twice takes its first score, as one UPDATE per match would give it; an
// update naming another owner's match is not its first. An id that no
// row can hold is left out of the statement: Postgres would refuse the
// whole statement for it (unstorable), where it should pass over one
// match it does not find, as SQLite does.
func (s *MatchStore) setScores(tx *gorm.DB, updates []ports.ScoreUpdate, now int64) ([]bool, error) {
	first := make([]bool, len(updates))
	at := make(map[string]int, len(updates)) // 1 + the update's index, by "<owner id> <match id>"
	var args []any
	for i, u := range updates {
		if !storable(u.Match.ID) || !storable(u.Match.OwnerID) {
			continue
		}
		if k := u.Match.OwnerID + " " + u.Match.ID; at[k] == 0 {
			at[k] = i + 1
			args = append(args, u.Match.ID, u.Match.OwnerID, u.Score.Value, string(u.Score.Intent), u.Score.Reason)
		}
	}
	const per = 1000 // matches a statement, well under both databases' limits on bound values
	for len(args) > 0 {
		n := min(len(args), 5*per)
		chunk := args[:n:n] // capped: appending the time must not overwrite the next chunk
		args = args[n:]
		scored, err := scanAll(tx.Raw(`WITH v (id, owner_id, score, intent, reason) AS (VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, CAST(? AS INTEGER), ?, ?), ", len(chunk)/5), ", ")+`)
			UPDATE matches SET score = v.score, intent = v.intent, reason = v.reason, scored_at = ?, lease_until = 0
			FROM v WHERE matches.id = v.id AND matches.owner_id = v.owner_id AND matches.score IS NULL
			RETURNING matches.owner_id || ' ' || matches.id`, append(chunk, now)...), func(k *string) []any { return []any{k} })
		if err != nil {
			return nil, err
		}
		for _, k := range scored {
			first[at[k]-1] = true
		}
	}
	return first, nil
}

// storable reports whether a text column can hold s: Postgres text takes
// neither a NUL nor bytes that are not UTF-8.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
