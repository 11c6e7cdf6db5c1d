package main

import (
	"net"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Rules of networking.k8s.io/v1 Ingresses, a subset of upstream's
// validation: a defaultBackend or rules; hosts are DNS names (a leading
// "*." allowed), not IP addresses; every HTTP path has a supported
// pathType, Exact and Prefix paths are absolute; a backend is a Service
// (DNS-1035 name, a port by name or by number, not both) or a resource,
// not both; TLS hosts and Secret names, ingressClassName. networking/v1
// has no Ingress defaults. No controller: nothing routes and the status
// (loadBalancer) is only what a client writes through /status.

type ingressRules struct{ noRules }

func (ingressRules) validate(obj runtime.Object) field.ErrorList {
	spec := &obj.(*networkingv1.Ingress).Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(path, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, path.Child("defaultBackend"))...)
	}
	if c := spec.IngressClassName; c != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*c) {
			errs = append(errs, field.Invalid(path.Child("ingressClassName"), *c, msg))
		}
	}
	for i, rule := range spec.Rules {
		rp := path.Child("rules").Index(i)
		if rule.Host != "" {
			errs = append(errs, validateIngressHost(rule.Host, rp.Child("host"))...)
		}
		if rule.HTTP == nil {
			continue
		}
		pp := rp.Child("http", "paths")
		if len(rule.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(pp, "must have at least one path"))
		}
		for j, p := range rule.HTTP.Paths {
			errs = append(errs, validateIngressPath(&p, pp.Index(j))...)
		}
	}
	for i, tls := range spec.TLS {
		tp := path.Child("tls").Index(i)
		for j, host := range tls.Hosts {
			errs = append(errs, validateIngressHost(host, tp.Child("hosts").Index(j))...)
		}
		if tls.SecretName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(tls.SecretName) {
				errs = append(errs, field.Invalid(tp.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	return errs
}

func validateIngressHost(host string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if net.ParseIP(host) != nil {
		errs = append(errs, field.Invalid(path, host, "must be a DNS name, not an IP address"))
	}
	msgs := validation.IsDNS1123Subdomain(host)
	if strings.Contains(host, "*") {
		msgs = validation.IsWildcardDNS1123Subdomain(host)
	}
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, host, msg))
	}
	return errs
}

func validateIngressPath(p *networkingv1.HTTPIngressPath, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	supported := []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypePrefix),
		string(networkingv1.PathTypeImplementationSpecific)}
	switch {
	case p.PathType == nil:
		errs = append(errs, field.Required(path.Child("pathType"), "must be specified"))
	case *p.PathType == networkingv1.PathTypeExact || *p.PathType == networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	case *p.PathType == networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), *p.PathType, supported))
	}
	return append(errs, validateIngressBackend(&p.Backend, path.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		errs = append(errs, field.Invalid(path, "", "cannot set both resource and service backends"))
	case b.Resource != nil:
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(path.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(path.Child("resource", "name"), ""))
		}
	case b.Service != nil:
		sp := path.Child("service")
		if b.Service.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		}
		for _, msg := range validation.IsDNS1035Label(b.Service.Name) {
			if b.Service.Name != "" {
				errs = append(errs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(sp.Child("port"), port, "cannot set both port name & port number"))
		case port.Name != "":
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(sp.Child("port", "name"), port.Name, msg))
			}
		default:
			for _, msg := range validation.IsValidPortNum(int(port.Number)) {
				errs = append(errs, field.Invalid(sp.Child("port", "number"), port.Number, msg))
			}
		}
	default:
		errs = append(errs, field.Invalid(path, "", "resource or service backend is required"))
	}
	return errs
}
