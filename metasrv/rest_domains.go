package metasrv

import (
	"fmt"
	"strings"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// Domains (see catalog.CreateDomain): every write is one proposal,
// validated by the state machine at its log position (C1–C6, visibility,
// privileges); reads answer from the snapshot for the caller. A domain the
// caller may not see answers 404 exactly like a missing one. Every write
// records a pre-event before it is decided (domainWrite).

func toDomain(d catalog.DomainInfo) api.DomainDTO {
	out := api.DomainDTO{Name: d.Name, Comment: d.Comment, Properties: d.Properties, Status: strings.ToLower(string(d.Status)),
		Owner: api.OwnerDTO{Name: d.Owner.Name, Type: lower(d.Owner.Type)}, Parent: d.Parent, Audit: d.Audit}
	if d.BackingTag != nil {
		out.BackingTag = &api.BackingTagDTO{Name: d.BackingTag.Name, Value: d.BackingTag.Value}
	}
	if d.Parent != "" {
		a := d.ParentAudit
		out.ParentAudit = &a
	}
	return out
}

func toRelations(rs []catalog.DomainRelation) []api.RelationDTO {
	out := make([]api.RelationDTO, 0, len(rs))
	for _, r := range rs {
		d := api.RelationDTO{Type: strings.ToLower(string(r.Type))}
		if r.Source.Type != 0 {
			d.Source = &api.ObjectDTO{FullName: r.Source.Name, Type: lower(r.Source.Type)}
		}
		out = append(out, d)
	}
	return out
}

// domainList answers a list of domains: names, or full domains with
// details.
func domainList(rq *request, ds []catalog.DomainInfo) any {
	return namesOr(rq, ds, func(d catalog.DomainInfo) string { return d.Name },
		func(d catalog.DomainInfo) (api.DomainDTO, bool) { return toDomain(d), true }, domainListResponse)
}

func domainListResponse(ds []api.DomainDTO) any { return api.DomainListResponse{Domains: ds} }

// renderDomain answers the domain name as the state after the write holds
// it.
func renderDomain(name string) func(*Result) (any, error) {
	return func(res *Result) (any, error) {
		d, ok := res.Lake.Snapshot.Domain(name)
		if !ok {
			return nil, fmt.Errorf("metasrv: domain %q missing after apply", name)
		}
		return api.DomainResponse{Domain: toDomain(d)}, nil
	}
}

// parseBackingTag checks a backing tag of a request (nil: none).
func parseBackingTag(b *api.BackingTagDTO) (*catalog.DomainTag, error) {
	if b == nil {
		return nil, nil
	}
	if b.Name == "" {
		return nil, badRequest("backingTag needs a name")
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	if b.Create && b.Value != "" {
		return nil, badRequest("a created backing tag takes no value")
	}
	return &catalog.DomainTag{Name: b.Name, Value: b.Value, Create: b.Create}, nil
}

// parseMemberTypes reads types= (repeatable, comma-separated, any case):
// leaf object types only.
func parseMemberTypes(vals []string) ([]catalog.ObjectType, error) {
	var out []catalog.ObjectType
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			t, err := catalog.ParseObjectType(s)
			if err != nil || t != catalog.ObjectTable {
				return nil, badRequest("types: %q is not a member type (members are tables)", s)
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// recordPre records the pre-event (OutcomePre) of op on target by the
// request's actor.
func (s *Server) recordPre(rq *request, op string, target catalog.Object, detail string) {
	ev := Event{Metalake: rq.metalake, Event: catalog.Event{Time: s.now().UTC(), Actor: rq.actor(),
		Operation: op, Target: target, Outcome: OutcomePre, Detail: detail}}
	if rq.delegator != nil {
		ev.Delegator = rq.delegator.ID().String()
	}
	s.audit.Record(ev)
}

// preDetail is what a pre-event says about the change cmd asks for: the
// new parent or backing tag (the success event then has the old one too).
func preDetail(cmd catalog.Command) string {
	switch c := cmd.(type) {
	case catalog.SetDomainParent:
		return fmt.Sprintf("parent -> %q", c.Parent)
	case catalog.DetachDomain:
		return "parent -> (none)"
	case catalog.SetDomainBackingTag:
		if c.BackingTag == nil {
			return "backing tag -> (none)"
		}
		if c.BackingTag.Value != "" {
			return fmt.Sprintf("backing tag -> %q", c.BackingTag.Name+"="+c.BackingTag.Value)
		}
		return fmt.Sprintf("backing tag -> %q", c.BackingTag.Name)
	}
	return ""
}

// preEvents wraps a write so that a pre-event precedes its outcome: one per
// command it proposes, with the command's operation and target (those of
// its success or failure events); for a request refused before that (a bad
// body, a name that does not look like itself), one with op and the
// metalake as target, as its failure event has.
func (s *Server) preEvents(op string, fn writeFunc) writeFunc {
	return func(rq *request, l *Metalake) (*plan, error) {
		pl, err := fn(rq, l)
		if err == nil {
			err = checkDisplay(pl) // checked again by serveWrite, which answers it
		}
		if err != nil {
			s.recordPre(rq, op, catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}, "")
			return nil, err
		}
		for _, c := range pl.cmds {
			s.recordPre(rq, c.Op(), c.Target(), preDetail(c))
		}
		return pl, nil
	}
}

// preEventsOnDomain is preEvents for the generic owner and grant endpoints
// when they address a domain, and fn unchanged otherwise.
func (s *Server) preEventsOnDomain(op string, fn writeFunc) writeFunc {
	pre := s.preEvents(op, fn)
	return func(rq *request, l *Metalake) (*plan, error) {
		if t, err := catalog.ParseObjectType(rq.param("type")); err == nil && t == catalog.ObjectDomain {
			return pre(rq, l)
		}
		return fn(rq, l)
	}
}

// domainWrite registers a domain write with its pre-events.
func (s *Server) domainWrite(method, pattern, op string, fn writeFunc) {
	s.write(method, pattern, op, s.preEvents(op, fn))
}

func (s *Server) domainRoutes() {
	const base = "/api/metalakes/{tenant}"
	s.read(base+"/domains", "ListDomains", s.listDomains)
	s.domainWrite("POST", base+"/domains", "CreateDomain", s.createDomain)
	s.read(base+"/domains/{domain}", "GetDomain", s.getDomain)
	s.domainWrite("PUT", base+"/domains/{domain}", "AlterDomain", s.alterDomain)
	s.domainWrite("PATCH", base+"/domains/{domain}", "SetDomainStatus", s.setDomainStatus)
	s.domainWrite("DELETE", base+"/domains/{domain}", "DropDomain", s.dropDomain)
	s.domainWrite("PUT", base+"/domains/{domain}/parent", "SetDomainParent", s.setDomainParent)
	s.domainWrite("DELETE", base+"/domains/{domain}/parent", "DetachDomain", s.detachDomain)
	s.domainWrite("PUT", base+"/domains/{domain}/backingTag", "SetDomainBackingTag", s.setDomainBackingTag)
	s.read(base+"/domains/{domain}/subdomains", "ListSubdomains", s.listSubdomains)
	s.read(base+"/domains/{domain}/objects", "ListObjectsForDomain", s.listObjectsForDomain)
	s.read(base+"/objects/{type}/{fullName}/domains", "ListDomainsForObject", s.listDomainsForObject)
}

// listDomains serves GET …/domains.
func (s *Server) listDomains(rq *request, l *Metalake) (any, error) {
	return domainList(rq, l.Snapshot.ViewDomains(rq.actor())), nil
}

// getDomain serves GET …/domains/{domain}.
func (s *Server) getDomain(rq *request, l *Metalake) (any, error) {
	d, err := l.Snapshot.ViewDomain(rq.actor(), rq.param("domain"))
	if err != nil {
		return nil, err
	}
	return api.DomainResponse{Domain: toDomain(d)}, nil
}

// listSubdomains serves GET …/domains/{domain}/subdomains.
func (s *Server) listSubdomains(rq *request, l *Metalake) (any, error) {
	ds, err := l.Snapshot.ViewSubdomains(rq.actor(), rq.param("domain"))
	if err != nil {
		return nil, err
	}
	return domainList(rq, ds), nil
}

// listObjectsForDomain serves GET …/domains/{domain}/objects.
func (s *Server) listObjectsForDomain(rq *request, l *Metalake) (any, error) {
	qv := rq.r.URL.Query()
	types, err := parseMemberTypes(qv["types"])
	if err != nil {
		return nil, err
	}
	q := catalog.MemberQuery{Scopes: qv["domains"], Types: types, NameContains: qv.Get("nameContains")}
	ms, err := l.Snapshot.DomainMembers(rq.actor(), rq.param("domain"), q)
	if err != nil {
		return nil, err
	}
	out := make([]api.MemberDTO, 0, len(ms))
	for _, m := range ms {
		out = append(out, api.MemberDTO{FullName: m.Object.Name, Type: lower(m.Object.Type), Relations: toRelations(m.Relations)})
	}
	return api.MemberListResponse{MetadataObjects: out}, nil
}

// listDomainsForObject serves GET …/objects/{type}/{fullName}/domains.
func (s *Server) listDomainsForObject(rq *request, l *Metalake) (any, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	ms, err := l.Snapshot.DomainsOf(rq.actor(), o)
	if err != nil {
		return nil, err
	}
	return namesOr(rq, ms, func(m catalog.DomainMembership) string { return m.Domain },
		func(m catalog.DomainMembership) (api.DomainDTO, bool) {
			d, ok := l.Snapshot.Domain(m.Domain)
			if !ok {
				return api.DomainDTO{}, false
			}
			dto := toDomain(d)
			dto.Relations = toRelations(m.Relations)
			return dto, true
		}, domainListResponse), nil
}

// createDomain serves POST …/domains.
func (s *Server) createDomain(rq *request, l *Metalake) (*plan, error) {
	var b api.CreateDomainRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	if err := checkProperties(b.Properties); err != nil {
		return nil, err
	}
	bt, err := parseBackingTag(b.BackingTag)
	if err != nil {
		return nil, err
	}
	if bt == nil {
		return nil, badRequest("a domain needs a backingTag")
	}
	c := catalog.CreateDomain{Name: b.Name, Comment: b.Comment, Properties: b.Properties, BackingTag: *bt, Parent: b.Parent}
	return &plan{cmds: []catalog.Command{c}, render: renderDomain(b.Name)}, nil
}

// alterDomain serves PUT …/domains/{domain}.
func (s *Server) alterDomain(rq *request, l *Metalake) (*plan, error) {
	updates, err := updatesOf[api.DomainUpdate](rq)
	if err != nil {
		return nil, err
	}
	name := rq.param("domain")
	c := catalog.AlterDomain{Name: name}
	for _, u := range updates {
		switch u.Type {
		case "rename":
			if err := catalog.CheckEntityName(u.NewName); err != nil {
				return nil, err
			}
			name = u.NewName
		case "updateComment":
		case "setProperty", "removeProperty":
			if u.Property == "" {
				return nil, badRequest("%s needs a property", u.Type)
			}
		default:
			return nil, badRequest("unknown domain update %q", u.Type)
		}
		c.Updates = append(c.Updates, catalog.DomainUpdate{Type: u.Type, NewName: u.NewName, NewComment: u.NewComment,
			Property: u.Property, Value: u.Value})
	}
	return &plan{cmds: []catalog.Command{c}, render: renderDomain(name)}, nil
}

// setDomainStatus serves PATCH …/domains/{domain}.
func (s *Server) setDomainStatus(rq *request, l *Metalake) (*plan, error) {
	var b api.SetDomainStatusRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if b.Status == nil {
		return nil, badRequest("status is required")
	}
	var st catalog.DomainStatus
	switch strings.ToUpper(*b.Status) {
	case string(catalog.DomainDraft):
		st = catalog.DomainDraft
	case string(catalog.DomainPublished):
		st = catalog.DomainPublished
	default:
		return nil, badRequest("status must be draft or published, not %q", *b.Status)
	}
	name := rq.param("domain")
	return &plan{cmds: []catalog.Command{catalog.SetDomainStatus{Name: name, Status: st}}, render: renderDomain(name)}, nil
}

// dropDomain serves DELETE …/domains/{domain}.
func (s *Server) dropDomain(rq *request, l *Metalake) (*plan, error) {
	c := catalog.DropDomain{Name: rq.param("domain")}
	pl := dropPlan(l.Snapshot.Visible(rq.actor(), c.Target()), c)
	if pl.now != nil {
		// Answered without proposing: audited as the state machine
		// would have audited the refusal.
		s.recordPre(rq, c.Op(), c.Target(), "")
		err := catalog.Permit(l.Snapshot, rq.actor(), c)
		if err == nil {
			err = fmt.Errorf("%w: %s", catalog.ErrNotFound, c.Target())
		}
		err = &catalog.Error{Op: c.Op(), Target: c.Target().String(), Err: err}
		ev := Event{Metalake: rq.metalake, Event: catalog.Event{Time: s.now().UTC(), Actor: rq.actor(),
			Operation: c.Op(), Target: c.Target(), Outcome: catalog.Failure, Detail: err.Error()}}
		if rq.delegator != nil {
			ev.Delegator = rq.delegator.ID().String()
		}
		s.audit.Record(ev)
	}
	return pl, nil
}

// setDomainParent serves PUT …/domains/{domain}/parent.
func (s *Server) setDomainParent(rq *request, l *Metalake) (*plan, error) {
	var b api.SetDomainParentRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if b.Parent == "" {
		return nil, badRequest("parent is required (DELETE the parent to detach)")
	}
	name := rq.param("domain")
	return &plan{cmds: []catalog.Command{catalog.SetDomainParent{Name: name, Parent: b.Parent}}, render: renderDomain(name)}, nil
}

// detachDomain serves DELETE …/domains/{domain}/parent.
func (s *Server) detachDomain(rq *request, l *Metalake) (*plan, error) {
	name := rq.param("domain")
	return &plan{cmds: []catalog.Command{catalog.DetachDomain{Name: name}}, render: renderDomain(name)}, nil
}

// setDomainBackingTag serves PUT …/domains/{domain}/backingTag.
func (s *Server) setDomainBackingTag(rq *request, l *Metalake) (*plan, error) {
	var b api.SetDomainBackingTagRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if len(b.BackingTag) == 0 {
		return nil, badRequest("backingTag is required (null removes it)")
	}
	var dto *api.BackingTagDTO
	if string(b.BackingTag) != "null" {
		dto = &api.BackingTagDTO{}
		if err := decodeRequest(b.BackingTag, dto); err != nil {
			return nil, badRequest("backingTag: %v", err)
		}
	}
	bt, err := parseBackingTag(dto)
	if err != nil {
		return nil, err
	}
	if bt != nil && bt.Create {
		return nil, badRequest("create is only allowed when creating a domain")
	}
	name := rq.param("domain")
	return &plan{cmds: []catalog.Command{catalog.SetDomainBackingTag{Name: name, BackingTag: bt}}, render: renderDomain(name)}, nil
}
