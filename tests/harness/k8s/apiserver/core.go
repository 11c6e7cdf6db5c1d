package main

import (
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Rules of the core/v1 kinds: a subset of upstream's validation and
// defaulting, the part a controller or a test can observe.

// ---- namespaces --------------------------------------------------------------

type namespaceRules struct{ noRules }

func (namespaceRules) name(name string, prefix bool) []string {
	return apimachineryvalidation.ValidateNamespaceName(name, prefix)
}

// prepareForCreate: a namespace is Active from the start (nothing would ever
// make it so), and carries the kubernetes.io/metadata.name label that
// namespaceSelectors rely on.
func (namespaceRules) prepareForCreate(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	labelNamespace(ns)
}

func (namespaceRules) prepareForUpdate(obj, _ runtime.Object) {
	labelNamespace(obj.(*corev1.Namespace))
}

func labelNamespace(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func (namespaceRules) fields(obj runtime.Object) fields.Set {
	return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
}

// ---- secrets -----------------------------------------------------------------

type secretRules struct{ noRules }

// defaults: type Opaque, and stringData folded into data (upstream does the
// latter converting v1 to its internal type: stringData is never stored).
func (secretRules) defaults(obj runtime.Object) {
	s := obj.(*corev1.Secret)
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	foldStringData(s)
}

// A patch or server-side apply builds the object without decoding it again:
// fold there too.
func (r secretRules) prepareForCreate(obj runtime.Object)    { r.defaults(obj) }
func (r secretRules) prepareForUpdate(obj, _ runtime.Object) { r.defaults(obj) }

func foldStringData(s *corev1.Secret) {
	if s.StringData == nil {
		return
	}
	if s.Data == nil && len(s.StringData) > 0 {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

func (secretRules) validate(obj runtime.Object) field.ErrorList {
	s := obj.(*corev1.Secret)
	data := field.NewPath("data")
	errs := validateDataKeys(s.Data, data)
	if size := dataSize(s.Data, nil); size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(data, "", corev1.MaxSecretSize))
	}
	// The well-known types' required keys (upstream's ValidateSecret).
	need := func(keys ...string) {
		for _, k := range keys {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(data.Key(k), ""))
			}
		}
	}
	switch s.Type {
	case corev1.SecretTypeTLS:
		need(corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	case corev1.SecretTypeDockerConfigJson:
		need(corev1.DockerConfigJsonKey)
		if raw, ok := s.Data[corev1.DockerConfigJsonKey]; ok && !json.Valid(raw) {
			errs = append(errs, field.Invalid(data.Key(corev1.DockerConfigJsonKey), "<secret contents redacted>", "invalid JSON"))
		}
	case corev1.SecretTypeSSHAuth:
		need(corev1.SSHAuthPrivateKey)
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, password := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !password {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	}
	return errs
}

func (secretRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*corev1.Secret), old.(*corev1.Secret)
	var errs field.ErrorList
	if s.Type != o.Type {
		errs = append(errs, field.Invalid(field.NewPath("type"), s.Type, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return append(errs, validateImmutableData(o.Immutable, s.Immutable, s.Data, o.Data)...)
}

func (secretRules) fields(obj runtime.Object) fields.Set {
	return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
}

// ---- configmaps --------------------------------------------------------------

type configMapRules struct{ noRules }

func (configMapRules) validate(obj runtime.Object) field.ErrorList {
	c := obj.(*corev1.ConfigMap)
	errs := validateDataKeys(c.Data, field.NewPath("data"))
	errs = append(errs, validateDataKeys(c.BinaryData, field.NewPath("binaryData"))...)
	for k := range c.Data {
		if _, both := c.BinaryData[k]; both {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
	}
	if size := dataSize(c.BinaryData, c.Data); size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

func (configMapRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	c, o := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	type contents struct {
		Data       map[string]string
		BinaryData map[string][]byte
	}
	return validateImmutableData(o.Immutable, c.Immutable, contents{c.Data, c.BinaryData}, contents{o.Data, o.BinaryData})
}

// ---- shared by secrets and configmaps ----------------------------------------

func validateDataKeys[V any](m map[string]V, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range m {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
	}
	return errs
}

func dataSize(binary map[string][]byte, text map[string]string) int {
	n := 0
	for _, v := range binary {
		n += len(v)
	}
	for _, v := range text {
		n += len(v)
	}
	return n
}

// validateImmutableData: once `immutable: true`, neither the contents nor
// the flag may change (only deletion remains).
func validateImmutableData(wasImmutable, isImmutable *bool, contents, oldContents any) field.ErrorList {
	if wasImmutable == nil || !*wasImmutable {
		return nil
	}
	var errs field.ErrorList
	if isImmutable == nil || !*isImmutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(contents, oldContents) {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	return errs
}

// ---- services ----------------------------------------------------------------

type serviceRules struct{ noRules }

func (serviceRules) name(name string, prefix bool) []string {
	return apimachineryvalidation.NameIsDNS1035Label(name, prefix)
}

func (serviceRules) defaults(obj runtime.Object) {
	spec := &obj.(*corev1.Service).Spec
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.Type != corev1.ServiceTypeExternalName {
		if spec.InternalTrafficPolicy == nil {
			cluster := corev1.ServiceInternalTrafficPolicyCluster
			spec.InternalTrafficPolicy = &cluster
		}
		if spec.IPFamilyPolicy == nil {
			single := corev1.IPFamilyPolicySingleStack
			spec.IPFamilyPolicy = &single
		}
	}
	if (spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer) &&
		spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

func (serviceRules) validate(obj runtime.Object) field.ErrorList {
	spec := obj.(*corev1.Service).Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	switch spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		if len(spec.Ports) == 0 && spec.ClusterIP != corev1.ClusterIPNone {
			errs = append(errs, field.Required(path.Child("ports"), ""))
		}
	case corev1.ServiceTypeExternalName:
		if spec.ExternalName == "" {
			errs = append(errs, field.Required(path.Child("externalName"), ""))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type,
			[]string{"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"}))
	}
	names := map[string]bool{}
	for i, p := range spec.Ports {
		pp := path.Child("ports").Index(i)
		if len(spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "must be set when there is more than one port"))
		}
		if p.Name != "" {
			if names[p.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			names[p.Name] = true
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
		}
		errs = append(errs, validateProtocol(p.Protocol, pp.Child("protocol"))...)
	}
	return errs
}

func (serviceRules) fields(obj runtime.Object) fields.Set {
	spec := obj.(*corev1.Service).Spec
	return fields.Set{"spec.clusterIP": spec.ClusterIP, "spec.type": string(spec.Type)}
}

func validateProtocol(p corev1.Protocol, path *field.Path) field.ErrorList {
	switch p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, p, []string{"TCP", "UDP", "SCTP"})}
}

// ---- pods --------------------------------------------------------------------

type podRules struct{ noRules }

func (podRules) defaults(obj runtime.Object) {
	defaultPodSpec(&obj.(*corev1.Pod).Spec, corev1.RestartPolicyAlways)
}

// prepareForCreate: Pending until someone (a test's kubelet) says otherwise.
func (podRules) prepareForCreate(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
}

func (podRules) validate(obj runtime.Object) field.ErrorList {
	return validatePodSpec(&obj.(*corev1.Pod).Spec, field.NewPath("spec"))
}

func (podRules) fields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}
