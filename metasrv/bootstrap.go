package metasrv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"lakegate/authz"
	"lakegate/catalog"
)

// Seed is what Bootstrap puts in place: a metalake and its first
// governance. It is the in-process counterpart of an operator's
// POST /api/metalakes followed by the owner's REST writes, and it is
// checked as they are.
type Seed struct {
	// Metalake is the metalake to create unless it exists: a tenant id.
	Metalake string
	// Operator is the principal id, in the node's principal map, of the
	// operator who creates the metalake (the actor of its audit event).
	Operator string
	// Owner is the metalake's owner; Commands are proposed as it.
	Owner      string
	Comment    string
	Properties map[string]string
	// Commands are the metalake's first governance, proposed in one
	// proposal (all or nothing) as Owner. They are the creations and grants
	// a REST client makes when it sets a metalake up: CreateCatalog,
	// CreateSchema, CreateUser, CreateGroup, CreateRole and GrantRoles;
	// any other command is refused. The first one creates an object: when
	// that object exists, the seed was applied before and Commands are not
	// proposed again.
	Commands []catalog.Command
}

// Bootstrap applies seed on the leader through the checks REST applies to
// the same writes — the metalake's name, display names
// (catalog.CheckDisplayName), object and entity names, catalog types and
// properties, the grants a role may be created with (catalog.CheckEntry) —
// and the same proposal path (batching, metrics, audit). It is idempotent:
// an existing metalake is kept, and Commands are proposed only while the
// object their first command creates is missing, so a start interrupted
// between the two proposals completes the seed. Nothing is proposed when
// any check fails; the error wraps ErrBadRequest, ErrForbidden or
// catalog's sentinel as REST's answer would.
func (s *Server) Bootstrap(ctx context.Context, seed Seed) error {
	if err := s.checkSeed(seed); err != nil {
		return s.refuseSeed(seed, err)
	}
	if !s.node.IsLeader() {
		return fmt.Errorf("metasrv: bootstrap of metalake %q: %w: this node does not lead", seed.Metalake, ErrUnavailable)
	}
	l, exists := s.fsm.Lake(seed.Metalake)
	var base *catalog.Snapshot
	if exists {
		base = l.Snapshot
	} else {
		// The metalake as its creation makes it: the commands are checked
		// against it before anything is proposed.
		var err error
		if base, err = catalog.NewAt(seed.Metalake, seed.Owner, s.now(), 0); err != nil {
			return s.refuseSeed(seed, err)
		}
	}
	apply := len(seed.Commands) > 0 && !seeded(base, seed.Commands[0])
	if apply {
		// The role grants are checked against the state each command
		// meets: the seed's earlier commands applied, as they would be had
		// each been its own REST request.
		snap := base
		meta := catalog.Meta{Actor: seed.Owner, Time: s.now()}
		for _, c := range seed.Commands {
			if err := catalog.CheckEntry(snap, seed.Owner, c); err != nil {
				return s.refuseSeed(seed, err)
			}
			next, _, err := catalog.Apply(snap, c, meta)
			if err != nil {
				return s.refuseSeed(seed, err)
			}
			snap = next
		}
	}
	if !exists {
		err := s.proposeSeed(ctx, Proposal{Metalake: seed.Metalake, Actor: seed.Operator, Admin: true, Time: s.now(),
			Lake: &LakeOp{Op: LakeCreate, Owner: seed.Owner, Comment: seed.Comment, Properties: maps.Clone(seed.Properties)}})
		if err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
			return fmt.Errorf("metasrv: bootstrap: creating metalake %q: %w", seed.Metalake, err)
		}
	}
	if !apply {
		return nil
	}
	if l, ok := s.fsm.Lake(seed.Metalake); !ok {
		return fmt.Errorf("metasrv: bootstrap: metalake %q is missing after its creation: %w", seed.Metalake, ErrNotFound)
	} else if seeded(l.Snapshot, seed.Commands[0]) {
		return nil // seeded meanwhile
	}
	p := Proposal{Metalake: seed.Metalake, Actor: seed.Owner, Time: s.now()}
	for _, c := range seed.Commands {
		b, err := catalog.EncodeCommand(c)
		if err != nil {
			return fmt.Errorf("metasrv: bootstrap of metalake %q: %w", seed.Metalake, err)
		}
		p.Commands = append(p.Commands, b)
	}
	if err := s.proposeSeed(ctx, p); err != nil {
		return fmt.Errorf("metasrv: bootstrap: governance of metalake %q: %w", seed.Metalake, err)
	}
	return nil
}

// checkSeed applies REST's entry checks to the whole seed, before anything
// is proposed.
func (s *Server) checkSeed(seed Seed) error {
	if p, ok := s.byID.get(seed.Operator); !ok || p.Role() != authz.RoleOperator {
		// POST /api/metalakes is for operators only.
		return fmt.Errorf("%w: %q is no operator of this node's principal map", ErrForbidden, seed.Operator)
	}
	if err := checkMetalakeName(seed.Metalake); err != nil {
		return err
	}
	if seed.Owner == "" {
		return badRequest("a seed names the metalake's owner")
	}
	if err := checkProperties(seed.Properties); err != nil {
		return err
	}
	if len(seed.Commands) > 0 {
		if _, grant := seed.Commands[0].(catalog.GrantRoles); grant {
			return badRequest("a seed's first command creates an object (it marks the seed as applied)")
		}
	}
	for i, c := range seed.Commands {
		if err := checkSeedCommand(c); err != nil {
			return fmt.Errorf("command %d: %w", i+1, err)
		}
	}
	pl := &plan{lakeName: seed.Metalake, lake: &LakeOp{Op: LakeCreate, Owner: seed.Owner}, cmds: seed.Commands}
	return checkDisplay(pl)
}

// checkSeedCommand is what the REST handler creating the same thing checks
// of its request (objectLevel.create, principalKind.create, createRole,
// roleGrant.roles).
func checkSeedCommand(c catalog.Command) error {
	parts := func(full string, n int) error {
		ps := strings.Split(full, ".")
		if len(ps) != n {
			return badRequest("%q is not a name of %d parts", full, n)
		}
		for _, p := range ps {
			if err := catalog.CheckNamePart(p); err != nil {
				return err
			}
		}
		return nil
	}
	switch c := c.(type) {
	case catalog.CreateCatalog:
		if c.Type != catalogManaged && c.Type != catalogUpstream {
			return badRequest("catalog type must be %q or %q", catalogManaged, catalogUpstream)
		}
		if err := checkCatalogProperties(c.Type, c.Properties); err != nil {
			return err
		}
		return parts(c.Name, 1)
	case catalog.CreateSchema:
		return parts(c.Name, 2)
	case catalog.CreateUser:
		return catalog.CheckEntityName(c.Name)
	case catalog.CreateGroup:
		return catalog.CheckEntityName(c.Name)
	case catalog.CreateRole:
		return catalog.CheckEntityName(c.Name)
	case catalog.GrantRoles:
		if len(c.Roles) == 0 {
			return badRequest("no roleNames")
		}
		return nil
	case nil:
		return badRequest("a nil command")
	}
	return badRequest("%s is not a seed command", c.Op())
}

// seeded reports whether the object first creates exists.
func seeded(snap *catalog.Snapshot, first catalog.Command) bool {
	var ok bool
	switch c := first.(type) {
	case catalog.CreateCatalog, catalog.CreateSchema:
		_, ok = snap.Object(c.Target())
	case catalog.CreateUser:
		_, ok = snap.User(c.Name)
	case catalog.CreateGroup:
		_, ok = snap.Group(c.Name)
	case catalog.CreateRole:
		_, ok = snap.Role(c.Name)
	}
	return ok
}

// refuseSeed audits a seed refused before it was proposed, as REST audits
// a refused request, and returns err with the seed's metalake.
func (s *Server) refuseSeed(seed Seed, err error) error {
	s.rejectEvent(nil, seed.Metalake, seed.Operator, "Bootstrap", catalog.Object{Type: catalog.ObjectMetalake, Name: seed.Metalake}, err)
	return fmt.Errorf("metasrv: bootstrap of metalake %q: %w", seed.Metalake, err)
}

// proposeSeed proposes p as REST's writes do: through the batcher, with the
// proposal metrics.
func (s *Server) proposeSeed(ctx context.Context, p Proposal) error {
	_, _, err := s.propose(ctx, p, nil)
	return err
}

// propose appends cmds to p's commands and proposes p through the batcher
// until ctx ends, observing the proposal metrics: REST's writes, seeds and
// membership syncs all go this one way. It returns the apply result and
// the log index (0 when nothing was committed).
func (s *Server) propose(ctx context.Context, p Proposal, cmds []catalog.Command) (any, uint64, error) {
	for _, c := range cmds {
		b, err := catalog.EncodeCommand(c)
		if err != nil {
			return nil, 0, err
		}
		p.Commands = append(p.Commands, b)
	}
	b, err := EncodeProposal(p)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	out, index, err := s.batch.propose(ctx, b)
	s.metrics.observeProposal(time.Since(start), index, err)
	return out, index, err
}

// AwaitLeadership waits until this node leads its cluster and has applied
// every entry logged before its term (a Barrier), as a single-voter node
// does shortly after New; Bootstrap needs it. It returns ctx's error,
// wrapped, when ctx ends first.
func (s *Server) AwaitLeadership(ctx context.Context) error {
	for !s.node.IsLeader() {
		ch := s.node.LeaderCh()
		if s.node.IsLeader() {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("metasrv: waiting for leadership: %w", ctx.Err())
		}
	}
	// Leading is not enough: the log before this term must be applied too.
	if err := s.node.Barrier(ctx); err != nil {
		return fmt.Errorf("metasrv: waiting for leadership: %w", err)
	}
	return nil
}
