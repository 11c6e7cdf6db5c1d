package main

import (
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Rules of policy/v1 PodDisruptionBudgets, as upstream's validation: at
// most one of minAvailable and maxUnavailable, each a non-negative integer
// or a percentage of at most 100%; a valid label selector (optional: none
// selects no pod in policy/v1); a known unhealthyPodEvictionPolicy.
// policy/v1 has no defaults. Nothing evicts (no /eviction) and no
// controller computes the status.

type podDisruptionBudgetRules struct{ noRules }

func (podDisruptionBudgetRules) validate(obj runtime.Object) field.ErrorList {
	spec := &obj.(*policyv1.PodDisruptionBudget).Spec
	path := field.NewPath("spec")
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(path, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		errs = append(errs, validateIntOrPercent(*spec.MinAvailable, path.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		errs = append(errs, validateIntOrPercent(*spec.MaxUnavailable, path.Child("maxUnavailable"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector,
		metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil &&
		*p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		errs = append(errs, field.NotSupported(path.Child("unhealthyPodEvictionPolicy"), *p,
			[]string{string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow)}))
	}
	return errs
}

// validateIntOrPercent: a non-negative integer or a percentage ("50%") of
// at most 100% (upstream's ValidatePositiveIntOrPercent and
// IsNotMoreThan100Percent).
func validateIntOrPercent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		if msgs := validation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(path, v, "must be an integer or percentage (e.g '5%')")}
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); err == nil && n > 100 {
			return field.ErrorList{field.Invalid(path, v, "must not be greater than 100%")}
		}
	case intstr.Int:
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntVal), path)
	}
	return nil
}
