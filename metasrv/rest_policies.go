package metasrv

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

func toSelector(s catalog.Selector) *api.SelectorDTO {
	if s.Value == "" {
		return nil
	}
	return &api.SelectorDTO{Type: "tag_value", Value: s.Value}
}

func toPolicy(p catalog.PolicyInfo) api.PolicyDTO {
	c := api.PolicyContentDTO{ApplicableRoles: p.Content.ApplicableRoles, ExemptRoles: p.Content.ExemptRoles,
		Expression: p.Content.Expression, Mask: p.Content.Mask, Custom: p.Content.Custom}
	for _, pr := range p.Content.Privileges {
		c.Privileges = append(c.Privileges, lower(pr))
	}
	a := p.Audit
	return api.PolicyDTO{Name: p.Name, Comment: p.Comment, PolicyType: string(p.Type), Enabled: p.Enabled, Content: c, Audit: &a}
}

// parsePolicyType reads a policy type case-insensitively.
func parsePolicyType(s string) (catalog.PolicyType, error) {
	switch t := catalog.PolicyType(strings.ToLower(s)); t {
	case catalog.PolicySystemAccessControl, catalog.PolicyRowFilter, catalog.PolicyColumnMask, catalog.PolicyCustom:
		return t, nil
	}
	if s == "" {
		return "", badRequest("policyType is required")
	}
	return "", badRequest("unknown policyType %q", s)
}

// parseSelector reads the optional body of PUT /tags/{tag}/policies/{policy}:
// none, {} or {"selector":null} match by presence; {"selector":{"type":
// "TAG_VALUE","value":v}} matches value v; {"type":"ALL_VALUES"} is presence.
func parseSelector(rq *request) (catalog.Selector, error) {
	if len(bytes.TrimSpace(rq.body)) == 0 {
		return catalog.Selector{}, nil
	}
	var b api.AttachPolicyRequest
	if err := rq.decode(&b); err != nil {
		return catalog.Selector{}, err
	}
	if b.Selector == nil {
		return catalog.Selector{}, nil
	}
	switch strings.ToUpper(b.Selector.Type) {
	case "TAG_VALUE":
		if b.Selector.Value == nil || *b.Selector.Value == "" {
			return catalog.Selector{}, badRequest("a TAG_VALUE selector needs a non-empty value")
		}
		return catalog.Selector{Value: *b.Selector.Value}, nil
	case "ALL_VALUES":
		if b.Selector.Value != nil {
			return catalog.Selector{}, badRequest("an ALL_VALUES selector takes no value")
		}
		return catalog.Selector{}, nil
	case "":
		return catalog.Selector{}, badRequest("selector type is required")
	default:
		return catalog.Selector{}, badRequest("unknown selector type %q", b.Selector.Type)
	}
}

func (s *Server) policyRoutes() {
	const base = "/api/metalakes/{tenant}"
	s.read(base+"/policies", "ListPolicies", s.listPolicies)
	s.write("POST", base+"/policies", "CreatePolicy", s.createPolicy)
	s.read(base+"/policies/{policy}", "GetPolicy", s.getPolicy)
	s.write("PUT", base+"/policies/{policy}", "AlterPolicy", s.alterPolicy)
	s.write("PATCH", base+"/policies/{policy}", "SetPolicyEnabled", s.setPolicyEnabled)
	s.write("DELETE", base+"/policies/{policy}", "DropPolicy", s.dropPolicy)
	s.read(base+"/policies/{policy}/tags", "ListTagsForPolicy", s.listTagsForPolicy)
	s.read(base+"/tags/{tag}/policies", "ListPoliciesForTag", s.listPoliciesForTag)
	s.write("PUT", base+"/tags/{tag}/policies/{policy}", "AttachPolicy", s.attachPolicy)
	s.write("DELETE", base+"/tags/{tag}/policies/{policy}", "DetachPolicy", s.detachPolicy)
	s.read(base+"/objects/{type}/{fullName}/policies", "ListPoliciesForObject", s.listPoliciesForObject)
}

// checkPolicyContent runs Config.CheckPolicy, if set, on the content a
// row_filter or column_mask policy would have: its mask keyword normalized
// as the catalog stores it. Other types are left to the catalog.
func (s *Server) checkPolicyContent(typ catalog.PolicyType, c catalog.PolicyContent) error {
	if s.cfg.CheckPolicy == nil || (typ != catalog.PolicyRowFilter && typ != catalog.PolicyColumnMask) {
		return nil
	}
	// The hook gets its own copy: the request's content is proposed as is.
	c.Privileges, c.ApplicableRoles, c.ExemptRoles = slices.Clone(c.Privileges), slices.Clone(c.ApplicableRoles), slices.Clone(c.ExemptRoles)
	c.Custom = bytes.Clone(c.Custom)
	if typ == catalog.PolicyColumnMask {
		switch m := strings.ToUpper(c.Mask); m {
		case catalog.MaskNull, catalog.MaskRedact, catalog.MaskHash, catalog.MaskLast4:
			c.Mask = m
		}
	}
	if err := s.cfg.CheckPolicy(typ, c); err != nil {
		return badRequest("%s", err.Error())
	}
	return nil
}

func policyListResponse(ps []api.PolicyDTO) any { return api.PolicyListResponse{Policies: ps} }

func associationListResponse(as []api.AssociationDTO) any {
	return api.AssociationListResponse{Associations: as}
}

func renderPolicy(name string) func(*Result) (any, error) {
	return func(res *Result) (any, error) {
		p, ok := res.Lake.Snapshot.Policy(name)
		if !ok {
			return nil, fmt.Errorf("metasrv: policy %q missing after apply", name)
		}
		return api.PolicyResponse{Policy: toPolicy(p)}, nil
	}
}

// listPolicies serves GET …/policies.
func (s *Server) listPolicies(rq *request, l *Metalake) (any, error) {
	ps := l.Snapshot.ViewPolicies(rq.actor())
	return namesOr(rq, ps, func(p catalog.PolicyInfo) string { return p.Name },
		func(p catalog.PolicyInfo) (api.PolicyDTO, bool) { return toPolicy(p), true }, policyListResponse), nil
}

// createPolicy serves POST …/policies.
func (s *Server) createPolicy(rq *request, l *Metalake) (*plan, error) {
	var b api.CreatePolicyRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	var content catalog.PolicyContent
	if len(b.Content) > 0 {
		if err := decodeRequest(b.Content, &content); err != nil {
			return nil, badRequest("request body: content: %v", err)
		}
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	typ, err := parsePolicyType(b.PolicyType)
	if err != nil {
		return nil, err
	}
	if err := s.checkPolicyContent(typ, content); err != nil {
		return nil, err
	}
	c := catalog.CreatePolicy{Name: b.Name, Comment: b.Comment, Type: typ, Enabled: b.Enabled == nil || *b.Enabled, Content: content}
	if err := catalog.CheckEntry(l.Snapshot, rq.actor(), c); err != nil {
		return nil, err
	}
	return &plan{cmds: []catalog.Command{c}, render: renderPolicy(b.Name)}, nil
}

// getPolicy serves GET …/policies/{policy}.
func (s *Server) getPolicy(rq *request, l *Metalake) (any, error) {
	p, err := l.Snapshot.ViewPolicy(rq.actor(), rq.param("policy"))
	if err != nil {
		return nil, err
	}
	return api.PolicyResponse{Policy: toPolicy(p)}, nil
}

// alterPolicy serves PUT …/policies/{policy}.
func (s *Server) alterPolicy(rq *request, l *Metalake) (*plan, error) {
	updates, err := updatesOf[api.PolicyUpdate](rq)
	if err != nil {
		return nil, err
	}
	name := rq.param("policy")
	c := catalog.AlterPolicy{Name: name}
	var last *catalog.PolicyUpdate // the last updateContent: the content the policy ends up with
	for _, u := range updates {
		pu := catalog.PolicyUpdate{Type: u.Type}
		switch u.Type {
		case "rename":
			if err := catalog.CheckEntityName(u.NewName); err != nil {
				return nil, err
			}
			pu.NewName, name = u.NewName, u.NewName
		case "updateComment":
			pu.NewComment = u.NewComment
		case "updateContent":
			typ, err := parsePolicyType(u.PolicyType)
			if err != nil {
				return nil, err
			}
			if u.NewContent == nil {
				return nil, badRequest("updateContent needs newContent")
			}
			pu.PolicyType, pu.NewContent = typ, u.NewContent
		default:
			return nil, badRequest("unknown policy update %q", u.Type)
		}
		c.Updates = append(c.Updates, pu)
		if pu.Type == "updateContent" {
			last = &pu
		}
	}
	if last != nil {
		if err := s.checkPolicyContent(last.PolicyType, *last.NewContent); err != nil {
			return nil, err
		}
	}
	if err := catalog.CheckEntry(l.Snapshot, rq.actor(), c); err != nil {
		return nil, err
	}
	return &plan{cmds: []catalog.Command{c}, render: renderPolicy(name)}, nil
}

// setPolicyEnabled serves PATCH …/policies/{policy}.
func (s *Server) setPolicyEnabled(rq *request, l *Metalake) (*plan, error) {
	var b api.SetPolicyEnabledRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if b.Enable == nil {
		return nil, badRequest("enable is required")
	}
	name := rq.param("policy")
	var c catalog.Command = catalog.DisablePolicy{Name: name}
	if *b.Enable {
		c = catalog.EnablePolicy{Name: name}
	}
	return &plan{cmds: []catalog.Command{c}, render: func(*Result) (any, error) { return api.BaseResponse{}, nil }}, nil
}

// dropPolicy serves DELETE …/policies/{policy}.
func (s *Server) dropPolicy(rq *request, l *Metalake) (*plan, error) {
	name := rq.param("policy")
	return dropPlan(l.Snapshot.Visible(rq.actor(), catalog.Policy(name)), catalog.DropPolicy{Name: name}), nil
}

// listTagsForPolicy serves GET …/policies/{policy}/tags.
func (s *Server) listTagsForPolicy(rq *request, l *Metalake) (any, error) {
	p, err := l.Snapshot.ViewPolicy(rq.actor(), rq.param("policy"))
	if err != nil {
		return nil, err
	}
	return namesOr(rq, p.Tags, func(a catalog.PolicyOnTag) string { return a.Tag },
		func(a catalog.PolicyOnTag) (api.AssociationDTO, bool) {
			return api.AssociationDTO{Tag: a.Tag, Selector: toSelector(a.Selector)}, true
		}, associationListResponse), nil
}

// listPoliciesForTag serves GET …/tags/{tag}/policies.
func (s *Server) listPoliciesForTag(rq *request, l *Metalake) (any, error) {
	t, err := l.Snapshot.ViewTag(rq.actor(), rq.param("tag"))
	if err != nil {
		return nil, err
	}
	return namesOr(rq, t.Policies, func(a catalog.PolicyOnTag) string { return a.Policy },
		func(a catalog.PolicyOnTag) (api.AssociationDTO, bool) {
			return api.AssociationDTO{Policy: a.Policy, Selector: toSelector(a.Selector)}, true
		}, associationListResponse), nil
}

// attachPolicy serves PUT …/tags/{tag}/policies/{policy}.
func (s *Server) attachPolicy(rq *request, l *Metalake) (*plan, error) {
	sel, err := parseSelector(rq)
	if err != nil {
		return nil, err
	}
	tag, pol := rq.param("tag"), rq.param("policy")
	return &plan{cmds: []catalog.Command{catalog.AttachPolicy{Tag: tag, Policy: pol, Selector: sel}},
		render: func(*Result) (any, error) {
			return api.AttachPolicyResponse{Policy: pol, Tag: tag, Selector: toSelector(sel)}, nil
		}}, nil
}

// detachPolicy serves DELETE …/tags/{tag}/policies/{policy}.
func (s *Server) detachPolicy(rq *request, l *Metalake) (*plan, error) {
	tag, pol := rq.param("tag"), rq.param("policy")
	return &plan{cmds: []catalog.Command{catalog.DetachPolicy{Tag: tag, Policy: pol}},
		render: func(*Result) (any, error) {
			return api.DetachPolicyResponse{Policy: pol, Tag: tag}, nil
		}}, nil
}

// listPoliciesForObject serves GET …/objects/{type}/{fullName}/policies.
func (s *Server) listPoliciesForObject(rq *request, l *Metalake) (any, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	ps, err := l.Snapshot.ViewPoliciesOf(rq.actor(), o)
	if err != nil {
		return nil, err
	}
	return namesOr(rq, ps, func(dp catalog.DerivedPolicy) string { return dp.Policy },
		func(dp catalog.DerivedPolicy) (api.PolicyDTO, bool) {
			p, ok := l.Snapshot.Policy(dp.Policy)
			if !ok {
				return api.PolicyDTO{}, false
			}
			d := toPolicy(p)
			inh := dp.Inherited
			d.Inherited = &inh
			if dp.Tag != "" { // empty: reached through tags the caller may not view
				src := api.ObjectDTO{FullName: dp.Source.Name, Type: lower(dp.Source.Type)}
				d.Tag, d.Selector, d.Source = dp.Tag, toSelector(dp.Selector), &src
			}
			return d, true
		}, policyListResponse), nil
}
