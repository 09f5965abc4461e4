#!/usr/bin/env python3
"""Compares the API requests each schedkit binary made (schedkit-apiserver's access log,
SK_APISERVER_AUDIT_LOG; e2e/apiserver/audit.c) with the RBAC the manifests grant it.

  rbac_check.py ROOT FULL_LOG [CLUSTER_ONLY_LOG...]

FULL_LOG comes from a run in the installed layout (namespace schedkit-system, the operator's
object and Lease names): every request counts. A CLUSTER_ONLY_LOG comes from a suite that runs a
binary with its own namespace and Lease names: only its requests to cluster-scoped grants count.

Fails (exit 1, one "not ok" line each) when a request is not granted (under-grant) or a granted
verb on a resource (and name) is never requested (over-grant). The operator must also hold every
permission it grants the scheduler (RBAC's escalation check), so those count as used for it.
Prints TAP-style lines."""
import sys
import yaml

NS = "schedkit-system"
UA = {"operator": "schedkit-operator ", "scheduler": "schedkit-scheduler "}
# Grants used by code paths the suites do not reach, each with where the code makes the request.
NOT_EXERCISED = {
    ("scheduler", "events.k8s.io", "events", "patch"):
        "kube/events.c patches the series of an Event repeated within its window",
    ("scheduler", "", "pods", "patch"):
        "scheduler/daemon/env.c patches a pod's annotations for a plugin (sk_handle_patch_pod_annotation, at PreBind)",
    ("scheduler", "authentication.k8s.io", "tokenreviews", "create"):
        "scheduler/daemon/serve.c (kube/delegate.c) reviews the bearer token of a request to /metrics or /configz",
    ("scheduler", "authorization.k8s.io", "subjectaccessreviews", "create"):
        "scheduler/daemon/serve.c (kube/delegate.c) asks whether a request to /metrics or /configz is allowed",
    ("operator", "events.k8s.io", "events", "patch"):
        "kube/events.c patches the series of an Event repeated within its window",
}


def atoms(rules, scope):
    """(scope, group, resource, verb, name or '*') for every grant."""
    out = set()
    for r in rules or []:
        names = r.get("resourceNames") or ["*"]
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    for n in names:
                        out.add((scope, g, res, v, n))
    return out


def load_roles(paths):
    cluster, ns = set(), set()
    for p in paths:
        with open(p) as f:
            for d in yaml.safe_load_all(f):
                if not d:
                    continue
                if d["kind"] == "ClusterRole":
                    cluster |= atoms(d.get("rules"), "cluster")
                elif d["kind"] == "Role":
                    ns |= atoms(d.get("rules"), "ns")
    return cluster | ns


def requests(path, who, cluster_only):
    out = set()
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 7 or not p[0].startswith(UA[who]):
                continue
            _, verb, group, res, sub, ns, name = [("" if x == "-" else x) for x in p]
            resource = res + ("/" + sub if sub else "")
            out.add((verb, group, resource, ns, name, cluster_only))
    return out


def covered(req, grants):
    verb, group, resource, ns, name, cluster_only = req
    hits = []
    for (scope, g, res, v, n) in grants:
        if g != group or res != resource or v != verb:
            continue
        if scope == "ns" and ns != NS:
            continue
        if n != "*" and n != name:
            continue
        hits.append((scope, g, res, v, n))
    return hits


def main():
    root, full, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    grants = {
        "operator": load_roles([root + "/manifests/operator/rbac.yaml"]),
        "scheduler": load_roles([root + "/operator/tests/golden/resources_clusterrole.yaml",
                                 root + "/operator/tests/golden/resources_role.yaml"]),
    }
    failed = 0
    for who in ("operator", "scheduler"):
        reqs = requests(full, who, False)
        for e in extra:
            reqs |= requests(e, who, True)
        if not reqs:
            print("not ok - %s made requests (is the access log empty?)" % who)
            failed += 1
            continue
        used = set()
        under = []
        for r in sorted(reqs):
            if r[5]:  # cluster-only log: judged by the ClusterRole alone
                if not any(sc == "cluster" and g == r[1] and res == r[2] for (sc, g, res, v, n) in grants[who]):
                    continue  # a namespaced grant, under the suite's own names
                hits = [h for h in covered(r, grants[who]) if h[0] == "cluster"]
            else:
                hits = covered(r, grants[who])
            if not hits:
                under.append(r)
            used |= set(hits)
        for r in under:
            print("not ok - %s: %s %s%s%s%s is not granted" % (
                who, r[0], (r[1] + "/") if r[1] else "", r[2],
                (" in " + r[3]) if r[3] else "", (" name " + r[4]) if r[4] else ""))
        failed += len(under)
        if not under:
            print("ok - %s: every request it made is granted (%d distinct)" % (who, len(reqs)))
        unused = []
        for a in sorted(grants[who] - used):
            scope, g, res, v, n = a
            if who == "operator" and (("cluster" if scope == "cluster" else "ns"), g, res, v, n) in grants["scheduler"]:
                continue  # held to grant it to the scheduler
            if (who, g, res, v) in NOT_EXERCISED:
                print("# %s: %s %s %s not exercised here: %s" % (who, v, g or "core", res, NOT_EXERCISED[(who, g, res, v)]))
                continue
            unused.append(a)
        for a in unused:
            print("not ok - %s: %s %s%s%s (%s) is granted but never requested" % (
                who, a[3], (a[1] + "/") if a[1] else "", a[2], (" name " + a[4]) if a[4] != "*" else "",
                "ClusterRole" if a[0] == "cluster" else "Role"))
        failed += len(unused)
        if not unused:
            print("ok - %s: every grant is used (%d)" % (who, len(grants[who])))
    # escalation: the operator holds what it grants the scheduler
    missing = grants["scheduler"] - grants["operator"]
    for a in sorted(missing):
        print("not ok - operator lacks %s %s %s (%s) that it grants the scheduler" % (a[3], a[1], a[2], a[4]))
    if not missing:
        print("ok - the operator holds every permission it grants the scheduler")
    failed += len(missing)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
