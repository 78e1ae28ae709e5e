package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// A start step that waits on a peer without a context (the AMQP
// library's subscription does) is given up on when the start's abort
// ends: the start fails at once with the abort's cause, and fx stops
// what had started before it, under the start's context, which is
// still live. The step's loop never runs.
func TestStartAbortGivesUpAStepAndStopsWhatStarted(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stepping, stopped := make(chan struct{}), make(chan struct{})
	var loopRan atomic.Bool
	a := fx.New(
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.Invoke(func(lc fx.Lifecycle) {
			// What started before the step: the database, say.
			lc.Append(fx.StopHook(func() { close(stopped) }))
			backgroundAfter(lc, func(context.Context) error {
				close(stepping)
				<-release // deaf to its context, as the subscription is
				return nil
			}, func(context.Context) { loopRan.Store(true) }, nil)
		}),
	)
	cause := errors.New("signal")
	abort, interrupt := context.WithCancelCause(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- a.Start(WithStartAbort(ctx, abort)) }()
	<-stepping
	interrupt(cause)
	select {
	case err := <-started:
		if !errors.Is(err, cause) {
			t.Fatalf("start: %v, want the abort's cause", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the start still waits for its step after the abort")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("what had started was not stopped")
	}
	if loopRan.Load() {
		t.Fatal("the loop of a step given up on ran")
	}
}
