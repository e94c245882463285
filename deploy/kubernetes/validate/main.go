// Command validate checks kreplicate's Kubernetes manifests (deploy/kubernetes/*.yaml) with the
// official API types: every document is decoded strictly (sigs.k8s.io/yaml's UnmarshalStrict:
// an unknown or duplicated field is an error) into the typed object of its apiVersion and kind,
// an unknown kind is an error, and each workload is checked for what kreplicate needs:
//
//   - the container runs the image's entrypoint with --config in a mounted ConfigMap and a
//     --flow of that config file; every ${file:PATH} of the file (and every absolute path in a
//     cluster's properties) is a file of a mounted Secret or ConfigMap volume, read-only, and no
//     secret reaches the container as an environment variable;
//   - --metrics-addr listens beyond loopback on the port named "metrics"; the liveness probe
//     gets /healthz and the readiness probe /readyz there; the Prometheus annotations name it;
//   - terminationGracePeriodSeconds exceeds the stop's bound: --delivery-timeout + 5 s (the
//     flush) + --timeout (the commit), both stated in the args;
//   - a Deployment (replicas sharing a consumer group) passes no --shard and no exactly-once
//     guarantee; a StatefulSet passes --shard=$(POD_INDEX)/N with N its replicas, ordinals
//     starting at 1 and POD_INDEX from the pod-index label (the downward API);
//   - non-root, read-only root file system, no privilege escalation, every capability dropped;
//   - a PodDisruptionBudget selects each workload's pods.
//
// Usage:
//
//	validate check FILE...                         one verdict line per file; exit 1 on any error
//	validate container KIND/NAME CONTAINER FILE... the container as JSON: args, env, mounts (with
//	                                               the ConfigMaps' and Secrets' files), metrics port
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The stop's bound beyond the two flags: the flush waits --delivery-timeout plus this margin.
const flushMargin = 5 * time.Second

// podIndexField is the downward API field that holds a StatefulSet pod's ordinal.
const podIndexField = "metadata.labels['apps.kubernetes.io/pod-index']"

// doc is one decoded document of a manifest file.
type doc struct {
	file string
	kind string
	name string
	obj  interface{}
}

// newObject returns the typed object for apiVersion and kind, or nil for a kind this checker
// does not know (an error: a typo in a kind would otherwise pass unchecked).
func newObject(apiVersion, kind string) interface{} {
	switch apiVersion + "/" + kind {
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/Service":
		return &corev1.Service{}
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "apps/v1/StatefulSet":
		return &appsv1.StatefulSet{}
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	}
	return nil
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// load decodes every document of file strictly.
func load(file string) ([]doc, []string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, []string{err.Error()}
	}
	var docs []doc
	var errs []string
	for i, part := range separator.Split(string(raw), -1) {
		var probe map[string]interface{}
		if err := yaml.Unmarshal([]byte(part), &probe); err != nil {
			errs = append(errs, fmt.Sprintf("document %d: %v", i+1, err))
			continue
		}
		if len(probe) == 0 {
			continue // comments only
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(part), &tm); err != nil {
			errs = append(errs, fmt.Sprintf("document %d: %v", i+1, err))
			continue
		}
		obj := newObject(tm.APIVersion, tm.Kind)
		if obj == nil {
			errs = append(errs, fmt.Sprintf("document %d: unknown kind %q of apiVersion %q", i+1, tm.Kind, tm.APIVersion))
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(part), obj); err != nil {
			errs = append(errs, fmt.Sprintf("document %d (%s): %v", i+1, tm.Kind, err))
			continue
		}
		name := obj.(metav1.Object).GetName()
		if name == "" {
			errs = append(errs, fmt.Sprintf("document %d (%s): no metadata.name", i+1, tm.Kind))
			continue
		}
		docs = append(docs, doc{file: file, kind: tm.Kind, name: name, obj: obj})
	}
	return docs, errs
}

// all holds every document of every file given, for references across files.
type all []doc

func (a all) find(kind, name string) interface{} {
	for _, d := range a {
		if d.kind == kind && d.name == name {
			return d.obj
		}
	}
	return nil
}

// args parses --flag=value and --flag value; a flag followed by another flag (or nothing)
// is a switch.
func parseArgs(args []string) (map[string]string, error) {
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return nil, fmt.Errorf("argument %q is not a --flag (kreplicate takes no positional arguments in a copy run)", a)
		}
		key, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			value = args[i+1]
			i++
		}
		if _, dup := flags[key]; dup {
			return nil, fmt.Errorf("--%s given twice", key)
		}
		flags[key] = value
	}
	return flags, nil
}

// duration parses kreplicate's durations: a whole number with ms, s, m or h.
func duration(s string) (time.Duration, error) {
	m := regexp.MustCompile(`^([0-9]+)(ms|s|m|h)$`).FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a duration (a whole number with ms, s, m or h)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	unit := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}

// mount is a container's volume mount resolved to its ConfigMap or Secret and their files.
type mount struct {
	Path      string            `json:"path"`
	ConfigMap string            `json:"configMap,omitempty"`
	Secret    string            `json:"secret,omitempty"`
	ReadOnly  bool              `json:"readOnly"`
	Files     map[string]string `json:"files"`
}

func mounts(a all, spec *corev1.PodSpec, c *corev1.Container) ([]mount, []string) {
	var out []mount
	var errs []string
	for _, vm := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == vm.Name {
				vol = &spec.Volumes[i]
			}
		}
		if vol == nil {
			errs = append(errs, fmt.Sprintf("volumeMount %q names no volume of the pod", vm.Name))
			continue
		}
		m := mount{Path: vm.MountPath, ReadOnly: vm.ReadOnly, Files: map[string]string{}}
		switch {
		case vol.ConfigMap != nil:
			m.ConfigMap = vol.ConfigMap.Name
			cm, _ := a.find("ConfigMap", m.ConfigMap).(*corev1.ConfigMap)
			if cm == nil {
				errs = append(errs, fmt.Sprintf("volume %q: ConfigMap %q is not among the manifests", vol.Name, m.ConfigMap))
				continue
			}
			for k, v := range cm.Data {
				m.Files[k] = v
			}
		case vol.Secret != nil:
			m.Secret = vol.Secret.SecretName
			s, _ := a.find("Secret", m.Secret).(*corev1.Secret)
			if s == nil {
				errs = append(errs, fmt.Sprintf("volume %q: Secret %q is not among the manifests", vol.Name, m.Secret))
				continue
			}
			for k, v := range s.Data {
				m.Files[k] = string(v)
			}
			for k, v := range s.StringData {
				m.Files[k] = v
			}
		default:
			// emptyDir and the like: a place to write, no files to check.
		}
		if vm.SubPath != "" {
			errs = append(errs, fmt.Sprintf("volumeMount %q uses subPath: its files would not follow updates", vm.Name))
		}
		out = append(out, m)
	}
	return out, errs
}

// fileOf finds the mount holding the absolute path p and the file's key.
func fileOf(ms []mount, p string) (*mount, string) {
	dir, base := path.Dir(p), path.Base(p)
	for i := range ms {
		if path.Clean(ms[i].Path) == dir {
			return &ms[i], base
		}
	}
	return nil, ""
}

var fileRef = regexp.MustCompile(`\$\{file:([^}]*)\}`)
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// setting resolves a config key as kreplicate does: the flag, else the flow's, else defaults'.
func setting(flags map[string]string, cfg map[string]interface{}, flow, key string) (string, bool) {
	if v, ok := flags[key]; ok {
		return v, true
	}
	if flows, ok := cfg["flows"].(map[string]interface{}); ok {
		if f, ok := flows[flow].(map[string]interface{}); ok {
			if v, ok := f[key]; ok {
				return fmt.Sprint(v), true
			}
		}
	}
	if d, ok := cfg["defaults"].(map[string]interface{}); ok {
		if v, ok := d[key]; ok {
			return fmt.Sprint(v), true
		}
	}
	return "", false
}

// workload is a Deployment or StatefulSet, reduced to what the checks read.
type workload struct {
	kind, name string
	replicas   int32
	selector   *metav1.LabelSelector
	template   *corev1.PodTemplateSpec
	sts        *appsv1.StatefulSet
}

func workloads(a all) []workload {
	var out []workload
	for _, d := range a {
		switch o := d.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{"Deployment", o.Name, replicas(o.Spec.Replicas), o.Spec.Selector, &o.Spec.Template, nil})
		case *appsv1.StatefulSet:
			out = append(out, workload{"StatefulSet", o.Name, replicas(o.Spec.Replicas), o.Spec.Selector, &o.Spec.Template, o})
		}
	}
	return out
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// checkWorkload returns the errors of one workload and a summary of what it found.
func checkWorkload(a all, w workload) ([]string, string) {
	var errs []string
	fail := func(format string, args ...interface{}) { errs = append(errs, fmt.Sprintf(format, args...)) }
	spec := &w.template.Spec

	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil || w.selector == nil || sel.Empty() {
		fail("spec.selector is missing or invalid")
	} else if !sel.Matches(labels.Set(w.template.Labels)) {
		fail("spec.selector does not match the pod template's labels")
	}
	c := container(spec, "kreplicate")
	if c == nil {
		return append(errs, "no container named kreplicate"), ""
	}
	if c.Image == "" {
		fail("container kreplicate has no image")
	}
	if len(c.Command) > 0 && !(len(c.Command) == 1 && c.Command[0] == "/usr/local/bin/kreplicate") {
		fail("command %q: leave it out (the image's entrypoint is /usr/local/bin/kreplicate)", c.Command)
	}
	flags, err := parseArgs(c.Args)
	if err != nil {
		return append(errs, err.Error()), ""
	}
	for _, off := range []string{"until-caught-up", "json"} {
		if _, ok := flags[off]; ok {
			fail("--%s in a continuous workload: the pod would exit and restart", off)
		}
	}

	// Security.
	psc, csc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		fail("securityContext.runAsNonRoot is not true")
	}
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		fail("securityContext.runAsUser is not a non-root uid (the image's user is 65532)")
	}
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem {
		fail("container securityContext.readOnlyRootFilesystem is not true")
	}
	if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation {
		fail("container securityContext.allowPrivilegeEscalation is not false")
	}
	if csc == nil || csc.Capabilities == nil || !dropsAll(csc.Capabilities.Drop) {
		fail("container securityContext.capabilities.drop does not name ALL")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		fail("automountServiceAccountToken is not false (kreplicate never calls the Kubernetes API)")
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fail("env %s comes from a Secret: mount the Secret as files and read them with ${file:PATH}", e.Name)
		}
	}
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			fail("envFrom names Secret %q: mount the Secret as files and read them with ${file:PATH}", e.SecretRef.Name)
		}
	}

	// Config file, flow, secrets.
	ms, merrs := mounts(a, spec, c)
	errs = append(errs, merrs...)
	for _, m := range ms {
		if !m.ReadOnly {
			fail("volumeMount at %s is not readOnly", m.Path)
		}
	}
	cfg := map[string]interface{}{}
	flow := flags["flow"]
	cfgPath, ok := flags["config"]
	if !ok {
		fail("no --config in the args")
	} else if m, key := fileOf(ms, cfgPath); m == nil || m.ConfigMap == "" {
		fail("--config %s is not in a mounted ConfigMap", cfgPath)
	} else if text, ok := m.Files[key]; !ok {
		fail("--config %s: ConfigMap %s has no key %q", cfgPath, m.ConfigMap, key)
	} else if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		fail("--config %s: ConfigMap %s's %s is not YAML: %v", cfgPath, m.ConfigMap, key, err)
	} else {
		for _, ref := range fileRef.FindAllStringSubmatch(text, -1) {
			m, key := fileOf(ms, ref[1])
			switch {
			case m == nil || m.Secret == "":
				fail("%s: ${file:%s} is not in a mounted Secret", cfgPath, ref[1])
			case !hasKey(m.Files, key):
				fail("%s: ${file:%s}: Secret %s has no key %q", cfgPath, ref[1], m.Secret, key)
			}
		}
		for _, ref := range envRef.FindAllStringSubmatch(text, -1) {
			if !hasEnv(c.Env, ref[1]) {
				fail("%s: ${%s} is not set in the container's env (kreplicate would exit 2)", cfgPath, ref[1])
			}
		}
		if clusters, ok := cfg["clusters"].(map[string]interface{}); ok {
			for name, cl := range clusters {
				props, _ := cl.(map[string]interface{})["properties"].(map[string]interface{})
				for k, v := range props {
					s := fmt.Sprint(v)
					if strings.HasPrefix(s, "/") {
						if m, key := fileOf(ms, s); m == nil || !hasKey(m.Files, key) {
							fail("%s: clusters.%s.properties.%s: %s is not a file of a mounted Secret or ConfigMap", cfgPath, name, k, s)
						}
					}
				}
			}
		}
		if flow == "" {
			fail("no --flow in the args: name the flow this workload runs")
		} else if flows, _ := cfg["flows"].(map[string]interface{}); flows[flow] == nil {
			fail("--flow %s: no such flow in %s", flow, cfgPath)
		}
	}
	guarantee, ok := setting(flags, cfg, flow, "guarantee")
	if !ok {
		guarantee = "at-least-once"
	}

	// Metrics, probes, annotations.
	addr, ok := flags["metrics-addr"]
	port := 0
	if !ok {
		fail("no --metrics-addr in the args: the probes need it")
	} else {
		host, p, found := strings.Cut(addr, ":")
		if strings.HasPrefix(addr, "[") {
			i := strings.LastIndex(addr, "]:")
			host, p, found = addr[:i+1], addr[i+2:], i >= 0
		}
		port, err = strconv.Atoi(p)
		switch {
		case !found || err != nil:
			fail("--metrics-addr %q is not HOST:PORT or :PORT", addr)
		case host == "127.0.0.1" || host == "localhost" || host == "[::1]":
			fail("--metrics-addr %s listens on loopback only: the kubelet's probes cannot reach it (use :%d)", addr, port)
		}
	}
	named := 0
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			named = int(p.ContainerPort)
		}
	}
	if named == 0 {
		fail("no container port named metrics")
	} else if port != 0 && named != port {
		fail("container port metrics is %d, --metrics-addr's port %d", named, port)
	}
	probe := func(what string, p *corev1.Probe, want string) {
		switch {
		case p == nil || p.HTTPGet == nil:
			fail("no %s probe with httpGet", what)
		case p.HTTPGet.Path != want:
			fail("%s probe gets %s, not %s", what, p.HTTPGet.Path, want)
		case !(p.HTTPGet.Port.String() == "metrics" || (port != 0 && p.HTTPGet.Port.IntValue() == port)):
			fail("%s probe port %s is not the metrics port", what, p.HTTPGet.Port.String())
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	ann := w.template.Annotations
	if ann["prometheus.io/scrape"] != "true" {
		fail("pod annotation prometheus.io/scrape is not \"true\"")
	}
	if ann["prometheus.io/port"] != strconv.Itoa(port) {
		fail("pod annotation prometheus.io/port %q is not the metrics port %d", ann["prometheus.io/port"], port)
	}
	if p, ok := ann["prometheus.io/path"]; ok && p != "/metrics" {
		fail("pod annotation prometheus.io/path %q is not /metrics", p)
	}

	// The stop's bound against the grace period.
	var bound time.Duration
	dt, okD := flags["delivery-timeout"]
	to, okT := flags["timeout"]
	if !okD || !okT {
		fail("--delivery-timeout and --timeout must be in the args, next to terminationGracePeriodSeconds, which must exceed --delivery-timeout + 5 s + --timeout")
	} else {
		d, errD := duration(dt)
		t, errT := duration(to)
		if errD != nil || errT != nil {
			fail("--delivery-timeout %s / --timeout %s: %v %v", dt, to, errD, errT)
		} else {
			bound = d + flushMargin + t
		}
	}
	grace := int64(30) // Kubernetes' default
	if spec.TerminationGracePeriodSeconds != nil {
		grace = *spec.TerminationGracePeriodSeconds
	}
	if bound > 0 && time.Duration(grace)*time.Second <= bound {
		fail("terminationGracePeriodSeconds %d does not exceed the stop's bound %s (--delivery-timeout %s + 5 s + --timeout %s): a SIGKILL could cut the final commit", grace, bound, dt, to)
	}

	// Deployment or StatefulSet: shared group or static shards.
	shard, hasShard := setting(flags, cfg, flow, "shard")
	switch w.kind {
	case "Deployment":
		if hasShard {
			fail("--shard %s in a Deployment: every replica would own the same shard", shard)
		}
		if guarantee == "exactly-once" {
			fail("flow %s is exactly-once, which runs as a static shard: use a StatefulSet", flow)
		}
	case "StatefulSet":
		want := fmt.Sprintf("$(POD_INDEX)/%d", w.replicas)
		if flags["shard"] != want {
			fail("--shard is %q, not %q (shards are 1-indexed: $(POD_INDEX) of %d replicas)", flags["shard"], want, w.replicas)
		}
		if w.sts.Spec.Ordinals == nil || w.sts.Spec.Ordinals.Start != 1 {
			fail("spec.ordinals.start is not 1: the pod index would be 0-based while shards start at 1")
		}
		found := false
		for _, e := range c.Env {
			if e.Name == "POD_INDEX" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == podIndexField {
				found = true
			}
		}
		if !found {
			fail("no env POD_INDEX from the downward API field %s", podIndexField)
		}
	}

	// A PodDisruptionBudget for the workload's pods.
	pdb := ""
	for _, d := range a {
		if p, ok := d.obj.(*policyv1.PodDisruptionBudget); ok && p.Spec.Selector != nil {
			if s, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && !s.Empty() && s.Matches(labels.Set(w.template.Labels)) {
				pdb = p.Name
			}
		}
	}
	if pdb == "" {
		fail("no PodDisruptionBudget selects its pods")
	}

	summary := fmt.Sprintf("%s/%s (flow %s, %s, %d replicas", w.kind, w.name, flow, guarantee, w.replicas)
	if w.kind == "StatefulSet" {
		summary += ", --shard " + flags["shard"] + " from ordinal 1"
	}
	summary += fmt.Sprintf(", probes :%d/healthz and /readyz, grace %ds > stop bound %s, secrets as files, PDB %s)", port, grace, bound, pdb)
	return errs, summary
}

func hasKey(files map[string]string, key string) bool { _, ok := files[key]; return ok }

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

func dropsAll(caps []corev1.Capability) bool {
	for _, c := range caps {
		if c == "ALL" {
			return true
		}
	}
	return false
}

func container(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	return nil
}

func loadAll(files []string) (all, map[string][]string) {
	var a all
	errs := map[string][]string{}
	for _, f := range files {
		docs, e := load(f)
		a = append(a, docs...)
		errs[f] = append(errs[f], e...)
	}
	return a, errs
}

func check(files []string) int {
	a, errs := loadAll(files)
	summaries := map[string][]string{}
	for _, w := range workloads(a) {
		e, s := checkWorkload(a, w)
		var file string
		for _, d := range a {
			if d.kind == w.kind && d.name == w.name {
				file = d.file
			}
		}
		for _, m := range e {
			errs[file] = append(errs[file], fmt.Sprintf("%s/%s: %s", w.kind, w.name, m))
		}
		if len(e) == 0 {
			summaries[file] = append(summaries[file], s)
		}
	}
	code := 0
	for _, f := range files {
		var kinds []string
		for _, d := range a {
			if d.file == f {
				kinds = append(kinds, d.kind+"/"+d.name)
			}
		}
		if len(errs[f]) > 0 {
			code = 1
			fmt.Printf("%s: INVALID\n", f)
			for _, e := range errs[f] {
				fmt.Printf("  error: %s\n", e)
			}
			continue
		}
		if len(kinds) == 0 {
			code = 1
			fmt.Printf("%s: INVALID\n  error: no document\n", f)
			continue
		}
		fmt.Printf("%s: ok: %s\n", f, strings.Join(kinds, ", "))
		for _, s := range summaries[f] {
			fmt.Printf("  %s\n", s)
		}
	}
	return code
}

// containerJSON prints what a test needs to run the container as the pod spec says.
func containerJSON(ref, name string, files []string) int {
	a, errs := loadAll(files)
	for f, e := range errs {
		if len(e) > 0 {
			fmt.Fprintf(os.Stderr, "%s: %s\n", f, strings.Join(e, "; "))
			return 1
		}
	}
	kind, wname, _ := strings.Cut(ref, "/")
	for _, w := range workloads(a) {
		if w.kind != kind || w.name != wname {
			continue
		}
		c := container(&w.template.Spec, name)
		if c == nil {
			fmt.Fprintf(os.Stderr, "%s has no container %s\n", ref, name)
			return 1
		}
		ms, merrs := mounts(a, &w.template.Spec, c)
		if len(merrs) > 0 {
			fmt.Fprintln(os.Stderr, strings.Join(merrs, "; "))
			return 1
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].Path < ms[j].Path })
		type envVar struct {
			Name      string `json:"name"`
			Value     string `json:"value,omitempty"`
			FieldPath string `json:"fieldPath,omitempty"`
		}
		env := []envVar{}
		for _, e := range c.Env {
			v := envVar{Name: e.Name, Value: e.Value}
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				v.FieldPath = e.ValueFrom.FieldRef.FieldPath
			}
			env = append(env, v)
		}
		port := 0
		for _, p := range c.Ports {
			if p.Name == "metrics" {
				port = int(p.ContainerPort)
			}
		}
		var user int64
		if sc := w.template.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
			user = *sc.RunAsUser
		}
		out := map[string]interface{}{
			"kind": w.kind, "name": w.name, "replicas": w.replicas, "image": c.Image,
			"command": nonNil(c.Command), "args": nonNil(c.Args), "env": env, "mounts": ms,
			"metricsPort": port, "runAsUser": user,
			"readOnlyRootFilesystem": c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem,
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Print(buf.String())
		return 0
	}
	fmt.Fprintf(os.Stderr, "no workload %s among the manifests\n", ref)
	return 1
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func main() {
	const usage = "usage: validate check FILE... | validate container KIND/NAME CONTAINER FILE..."
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		os.Exit(check(os.Args[2:]))
	case "container":
		if len(os.Args) < 5 {
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(containerJSON(os.Args[2], os.Args[3], os.Args[4:]))
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
}
