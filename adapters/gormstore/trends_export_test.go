package gormstore

import (
	"fmt"

	"gorm.io/gorm"
)

// dayCountsStep names the migration that made the daily counts.
const dayCountsStep = "daily counts of scored matches"

// RefillTrends drops db's daily counts and runs the migration that made
// them again, whose fill counts the matches already scored: what a
// database upgraded with scored matches in it gets.
func RefillTrends(db *DB) error {
	for _, s := range steps[db.postgres] {
		if s.name == dayCountsStep {
			return db.plain.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("DROP TABLE match_day_counts").Error; err != nil {
					return err
				}
				return tx.Exec(s.sql).Error
			})
		}
	}
	return fmt.Errorf("no migration named %q", dayCountsStep)
}
