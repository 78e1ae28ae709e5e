package gormstore

import (
	"context"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// SetScore implements ports.MatchStore.
func (s *MatchStore) SetScore(ctx context.Context, ownerID, id string, sc core.Score, plan ports.DeliveryPlan) (core.Match, bool, error) {
	m, err := s.Match(ctx, ownerID, id)
	if err != nil {
		return core.Match{}, false, err
	}
	got, err := s.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: sc}}, plan)
	if err != nil {
		return core.Match{}, false, err
	}
	if len(got) == 1 {
		return got[0], true, nil
	}
	m, err = s.Match(ctx, ownerID, id)
	return m, false, err
}

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
	err := s.db.inTx(ctx, func(tx *tx) error {
		out = out[:0]
		now := s.db.gorm.NowFunc()
		first, err := s.setScores(tx, updates, now.UnixMicro())
		if err != nil {
			return err
		}
		for i, u := range updates {
			if !first[i] {
				continue
			}
			m, sc := u.Match, u.Score
			m.Score = &sc
			out = append(out, m)
		}
		if plan == nil || len(out) == 0 {
			return nil
		}
		hooks := map[string][]core.Webhook{}
		var queued [][]any
		for _, m := range out {
			hs, ok := hooks[m.OwnerID]
			if !ok {
				var err error
				if hs, err = ownerWebhooks(tx, m.OwnerID); err != nil {
					return err
				}
				hooks[m.OwnerID] = hs
			}
			for _, d := range plan(m, hs, now) {
				if d.ID == "" {
					d.ID = newID()
				}
				queued = append(queued, []any{d.ID, d.WebhookID, d.OwnerID, m.ID, d.Event, string(d.Trigger), string(d.Status),
					d.Tries, d.ResponseStatus, d.Error, d.Payload, micros(d.CreatedAt), micros(d.LastAttemptAt), micros(d.NextAttemptAt)})
			}
		}
		if len(queued) == 0 {
			return nil
		}
		_, err = insertReturning(tx, "webhook_deliveries", []string{"id", "webhook_id", "owner_id", "match_id", "event", "trigger_kind",
			"status", "tries", "response_status", "last_error", "payload", "created_at", "last_attempt_at", "next_attempt_at"}, queued, "")
		return err
	})
	if err != nil {
		return nil, translate(err, "match")
	}
	return out, nil
}

// setScores stores each update's score where its match had none and
// reports which did. SQLite runs a cached UPDATE per match, which costs
// no round trip. Postgres runs one statement for the batch: an UPDATE
// per match was a round trip each while the transaction held the rows
// updated before it, so the scorer's transactions spent most of their
// time waiting for this process (docs/adr/0005-scoring-in-batches.md).
func (s *MatchStore) setScores(tx *tx, updates []ports.ScoreUpdate, now int64) ([]bool, error) {
	first := make([]bool, len(updates))
	if !s.db.postgres {
		for i, u := range updates {
			res, err := tx.exec("UPDATE matches SET score = ?, intent = ?, reason = ?, packed_score = ?, scored_at = ?, lease_until = 0 "+
				"WHERE id = ? AND owner_id = ? AND score IS NULL",
				u.Score.Value, string(u.Score.Intent), u.Score.Reason, packScore(u.Score), now, u.Match.ID, u.Match.OwnerID)
			if err != nil {
				return nil, err
			}
			n, err := res.RowsAffected()
			first[i] = err == nil && n == 1
		}
		return first, nil
	}
	// A match named twice takes its first score, as one UPDATE per match
	// would give it; an update naming another owner's match is not its
	// first.
	at := make(map[string]int, len(updates)) // by owner and id
	var ids, owners, intents, reasons, packed []string
	var scores []int64
	for i, u := range updates {
		k := u.Match.OwnerID + "\x00" + u.Match.ID
		if _, dup := at[k]; dup {
			continue
		}
		at[k] = i
		ids, owners, scores = append(ids, u.Match.ID), append(owners, u.Match.OwnerID), append(scores, int64(u.Score.Value))
		intents, reasons, packed = append(intents, string(u.Score.Intent)), append(reasons, u.Score.Reason), append(packed, packScore(u.Score))
	}
	rows, err := tx.query(`UPDATE matches SET score = v.score, intent = v.intent, reason = v.reason, packed_score = v.packed,
		scored_at = ?, lease_until = 0
		FROM unnest(?::text[], ?::text[], ?::integer[], ?::text[], ?::text[], ?::text[]) AS v(id, owner_id, score, intent, reason, packed)
		WHERE matches.id = v.id AND matches.owner_id = v.owner_id AND matches.score IS NULL
		RETURNING matches.owner_id, matches.id`, now, ids, owners, scores, intents, reasons, packed)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var owner, id string
		if err := rows.Scan(&owner, &id); err != nil {
			return nil, err
		}
		first[at[owner+"\x00"+id]] = true
	}
	return first, tx.db.driverErr(rows.Err())
}

// ownerWebhooks reads every webhook of the owner, for a delivery plan.
func ownerWebhooks(tx *tx, ownerID string) ([]core.Webhook, error) {
	rows, err := tx.query("SELECT id, owner_id, url, min_score, platforms, active, disabled_reason, consecutive_failures, created_at "+
		"FROM webhooks WHERE owner_id = ? ORDER BY created_at, id", ownerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []core.Webhook
	for rows.Next() {
		var r webhookRow
		if err := rows.Scan(&r.ID, &r.OwnerID, &r.URL, &r.MinScore, &r.Platforms, &r.Active, &r.DisabledReason,
			&r.ConsecutiveFailures, &r.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, r.webhook())
	}
	return out, tx.db.driverErr(rows.Err())
}
