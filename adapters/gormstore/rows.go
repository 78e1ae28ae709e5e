package gormstore

import (
	"strings"

	"gorm.io/gorm"
)

// convert turns the rows read into what a store returns.
func convert[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// list reads the rows of q and converts them; what names them in errors.
func list[R, T any](q *gorm.DB, what string, f func(R) T) ([]T, error) {
	var rows []R
	if err := q.Find(&rows).Error; err != nil {
		return nil, translate(err, what)
	}
	return convert(rows, f), nil
}

// one reads the row of q that conds select and converts it.
func one[R, T any](q *gorm.DB, what string, f func(R) T, conds ...any) (T, error) {
	var row R
	if err := q.Take(&row, conds...).Error; err != nil {
		var zero T
		return zero, translate(err, what)
	}
	return f(row), nil
}

// joinList stores a list of names (scopes, platforms) as one
// comma-separated column; splitList reads it back, empty as none.
func joinList[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ",")
}

func splitList[T ~string](s string) []T {
	var out []T
	for _, x := range strings.Split(s, ",") {
		if x != "" {
			out = append(out, T(x))
		}
	}
	return out
}
