package main

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Rules of apps/v1 Deployments and batch/v1 Jobs, and of the pod spec they
// (and core/v1 Pods) share. A subset of upstream's: what shapes the objects
// a controller reads back and the mistakes it could make writing them.

func ptr[T any](v T) *T { return &v }

// ---- pod spec ----------------------------------------------------------------

// defaultPodSpec applies upstream's common pod defaults; restartPolicy gets
// the given value when unset ("" leaves it unset, for Jobs which need one).
func defaultPodSpec(spec *corev1.PodSpec, restartPolicy corev1.RestartPolicy) {
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = restartPolicy
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr(corev1.DefaultEnableServiceLinks)
	}
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			defaultContainer(&containers[i])
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.Secret != nil && v.Secret.DefaultMode == nil {
			v.Secret.DefaultMode = ptr(corev1.SecretVolumeSourceDefaultMode)
		}
		if v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil {
			v.ConfigMap.DefaultMode = ptr(corev1.ConfigMapVolumeSourceDefaultMode)
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		// Always for :latest or no tag (a digest counts as pinned).
		c.ImagePullPolicy = corev1.PullIfNotPresent
		last := c.Image[strings.LastIndex(c.Image, "/")+1:]
		if !strings.Contains(c.Image, "@") && (!strings.Contains(last, ":") || strings.HasSuffix(last, ":latest")) {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if probe == nil {
			continue
		}
		if probe.TimeoutSeconds == 0 {
			probe.TimeoutSeconds = 1
		}
		if probe.PeriodSeconds == 0 {
			probe.PeriodSeconds = 10
		}
		if probe.SuccessThreshold == 0 {
			probe.SuccessThreshold = 1
		}
		if probe.FailureThreshold == 0 {
			probe.FailureThreshold = 3
		}
		if probe.HTTPGet != nil && probe.HTTPGet.Scheme == "" {
			probe.HTTPGet.Scheme = corev1.URISchemeHTTP
		}
		if probe.HTTPGet != nil && probe.HTTPGet.Path == "" {
			probe.HTTPGet.Path = "/"
		}
	}
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	names := map[string]bool{}
	check := func(list []corev1.Container, lp *field.Path) {
		for i, c := range list {
			cp := lp.Index(i)
			switch {
			case c.Name == "":
				errs = append(errs, field.Required(cp.Child("name"), ""))
			case names[c.Name]:
				errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
			default:
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
				}
			}
			names[c.Name] = true
			if strings.TrimSpace(c.Image) == "" {
				errs = append(errs, field.Required(cp.Child("image"), ""))
			}
			for j, p := range c.Ports {
				for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
					errs = append(errs, field.Invalid(cp.Child("ports").Index(j).Child("containerPort"), p.ContainerPort, msg))
				}
			}
		}
	}
	check(spec.InitContainers, path.Child("initContainers"))
	check(spec.Containers, path.Child("containers"))
	switch spec.RestartPolicy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy,
			[]string{"Always", "OnFailure", "Never"}))
	}
	volumes := map[string]bool{}
	for i, v := range spec.Volumes {
		vp := path.Child("volumes").Index(i)
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
		}
		if volumes[v.Name] {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		volumes[v.Name] = true
	}
	return errs
}

// validateTemplateSelector: a workload's selector is required, not empty,
// and selects its own pod template.
func validateTemplateSelector(selector *metav1.LabelSelector, template map[string]string, spec *field.Path) field.ErrorList {
	if selector == nil {
		return field.ErrorList{field.Required(spec.Child("selector"), "")}
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("selector"), selector, err.Error())}
	}
	if s.Empty() {
		return field.ErrorList{field.Invalid(spec.Child("selector"), selector, "empty selector is invalid for deployment")}
	}
	if !s.Matches(labels.Set(template)) {
		return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), template,
			"`selector` does not match template `labels`")}
	}
	return nil
}

func validateNonNegative(v *int32, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return apimachineryvalidation.ValidateNonnegativeField(int64(*v), path)
}

func validateSelectorUnchanged(selector, old *metav1.LabelSelector) field.ErrorList {
	if equality.Semantic.DeepEqual(selector, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "selector"), selector, apimachineryvalidation.FieldImmutableErrorMsg)}
}

// ---- deployments -------------------------------------------------------------

type deploymentRules struct{ noRules }

func (deploymentRules) defaults(obj runtime.Object) {
	spec := &obj.(*appsv1.Deployment).Spec
	if spec.Replicas == nil {
		spec.Replicas = ptr(int32(1))
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if spec.Strategy.RollingUpdate.MaxUnavailable == nil {
			spec.Strategy.RollingUpdate.MaxUnavailable = &quarter
		}
		if spec.Strategy.RollingUpdate.MaxSurge == nil {
			spec.Strategy.RollingUpdate.MaxSurge = &quarter
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr(int32(10))
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = ptr(int32(600))
	}
	defaultPodSpec(&spec.Template.Spec, corev1.RestartPolicyAlways)
}

func (deploymentRules) validate(obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.Deployment).Spec
	path := field.NewPath("spec")
	errs := validateTemplateSelector(spec.Selector, spec.Template.Labels, path)
	errs = append(errs, validateNonNegative(spec.Replicas, path.Child("replicas"))...)
	errs = append(errs, validateNonNegative(spec.RevisionHistoryLimit, path.Child("revisionHistoryLimit"))...)
	switch spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
	case appsv1.RecreateDeploymentStrategyType:
		if spec.Strategy.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(path.Child("strategy", "rollingUpdate"),
				"may not be specified when strategy `type` is 'Recreate'"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("strategy", "type"), spec.Strategy.Type,
			[]string{"RollingUpdate", "Recreate"}))
	}
	template := path.Child("template", "spec")
	errs = append(errs, validatePodSpec(&spec.Template.Spec, template)...)
	if p := spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(template.Child("restartPolicy"), p, []string{"Always"}))
	}
	return errs
}

func (deploymentRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	return validateSelectorUnchanged(obj.(*appsv1.Deployment).Spec.Selector, old.(*appsv1.Deployment).Spec.Selector)
}

// ---- jobs --------------------------------------------------------------------

type jobRules struct{ noRules }

func (jobRules) defaults(obj runtime.Object) {
	spec := &obj.(*batchv1.Job).Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr(int32(1))
	}
	if spec.BackoffLimit == nil {
		spec.BackoffLimit = ptr(int32(6))
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr(false)
	}
	if spec.PodReplacementPolicy == nil {
		spec.PodReplacementPolicy = ptr(batchv1.TerminatingOrFailed)
	}
	defaultPodSpec(&spec.Template.Spec, "")
}

// prepareForCreate generates the selector and the pod labels upstream does
// for a Job that does not choose its own (manualSelector): both name the
// Job's uid, so they are known only now.
func (jobRules) prepareForCreate(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	uid := string(job.UID)
	generated := map[string]string{
		batchv1.ControllerUidLabel: uid, batchv1.JobNameLabel: job.Name,
		// the legacy, unprefixed pair upstream still writes
		"controller-uid": uid, "job-name": job.Name,
	}
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	for k, v := range generated {
		job.Spec.Template.Labels[k] = v
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: uid}}
	}
}

func (jobRules) validate(obj runtime.Object) field.ErrorList {
	spec := &obj.(*batchv1.Job).Spec
	path := field.NewPath("spec")
	errs := validateTemplateSelector(spec.Selector, spec.Template.Labels, path)
	for name, v := range map[string]*int32{"parallelism": spec.Parallelism, "completions": spec.Completions, "backoffLimit": spec.BackoffLimit} {
		errs = append(errs, validateNonNegative(v, path.Child(name))...)
	}
	template := path.Child("template", "spec")
	errs = append(errs, validatePodSpec(&spec.Template.Spec, template)...)
	if p := spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(template.Child("restartPolicy"), p, []string{"OnFailure", "Never"}))
	}
	return errs
}

func (jobRules) validateUpdate(obj, old runtime.Object) field.ErrorList {
	job, previous := obj.(*batchv1.Job), old.(*batchv1.Job)
	errs := validateSelectorUnchanged(job.Spec.Selector, previous.Spec.Selector)
	// The pod template of a Job is immutable (upstream allows a few
	// scheduling fields to change while suspended; not here).
	if !equality.Semantic.DeepEqual(job.Spec.Template, previous.Spec.Template) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "template"), "", apimachineryvalidation.FieldImmutableErrorMsg))
	}
	if !equality.Semantic.DeepEqual(job.Spec.Completions, previous.Spec.Completions) &&
		(job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "completions"), job.Spec.Completions, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}

func (jobRules) fields(obj runtime.Object) fields.Set {
	return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
}
