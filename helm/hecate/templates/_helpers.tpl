{{/*
Helpers that take a component use a dict: (dict "ctx" $ "component" "api").
*/}}

{{- define "hecate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hecate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* <fullname>-<component>, e.g. hecate-api. */}}
{{- define "hecate.componentName" -}}
{{- printf "%s-%s" (include "hecate.fullname" .ctx | trunc (int (sub 62 (len .component))) | trimSuffix "-") .component }}
{{- end }}

{{- define "hecate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hecate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hecate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{- define "hecate.labels" -}}
helm.sh/chart: {{ include "hecate.chart" .ctx }}
{{ include "hecate.selectorLabels" . }}
{{- with .ctx.Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: hecate
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "hecate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "hecate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "hecate.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Secret holding DATABASE_URL, REDIS_URL, GATEWAY_AUTH_TOKEN, GATEWAY_SECRET_KEY. */}}
{{- define "hecate.secretName" -}}
{{- default (include "hecate.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/*
Objects the pre-install migration Job needs (its ServiceAccount and the chart-rendered Secret) must
exist before it runs, so they are hooks too, with a lower weight. Helm does not delete hook
objects on uninstall; NOTES.txt says so.
*/}}
{{- define "hecate.preInstallHookAnnotations" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: "-10"
helm.sh/hook-delete-policy: before-hook-creation
{{- end }}

{{/*
terminationGracePeriodSeconds: must outlast preStop sleep + GATEWAY_SHUTDOWN_GRACE_MS, or the
kubelet kills the process mid-drain. The derived value adds 15 s: the process's own hard-exit
timer fires 10 s after the grace period, and it should win over SIGKILL.
Input: (dict "ctx" $ "component" "api" "values" .Values.api).
*/}}
{{- define "hecate.terminationGracePeriodSeconds" -}}
{{- $graceSeconds := div (add (int .ctx.Values.config.shutdownGraceMs) 999) 1000 }}
{{- $floor := add $graceSeconds (int (default 0 .values.preStopSleepSeconds)) }}
{{- if .values.terminationGracePeriodSeconds }}
{{- $explicit := int .values.terminationGracePeriodSeconds }}
{{- if le $explicit (int $floor) }}
{{- fail (printf "%s.terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds + ceil(config.shutdownGraceMs / 1000) = %d" .component $explicit (int $floor)) }}
{{- end }}
{{- $explicit }}
{{- else }}
{{- add $floor 15 }}
{{- end }}
{{- end }}

{{/* Environment shared by api, worker and migrations. Input: (dict "ctx" $ "component" "api"). */}}
{{- define "hecate.env" -}}
{{- $ctx := .ctx }}
{{- include "hecate.assertChartOwnedEnv" (dict "where" "env / extraEnv" "env" $ctx.Values.env "extraEnv" $ctx.Values.extraEnv) }}
{{- $secret := include "hecate.secretName" $ctx }}
{{- $keys := $ctx.Values.secrets.keys -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $keys.databaseUrl }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $keys.redisUrl }}
- name: GATEWAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $keys.authToken }}
- name: GATEWAY_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $keys.secretKey }}
- name: HOST
  value: "0.0.0.0"
- name: GATEWAY_MIGRATE_ON_BOOT
  value: {{ $ctx.Values.config.migrateOnBoot | toString | quote }}
- name: GATEWAY_SHUTDOWN_GRACE_MS
  value: {{ int $ctx.Values.config.shutdownGraceMs | toString | quote }}
- name: LOG_LEVEL
  value: {{ $ctx.Values.config.logLevel | quote }}
- name: TMPDIR
  value: /tmp
{{- with $ctx.Values.config.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "hecate-%s" $.component | quote }}
{{- end }}
{{- range $name, $value := $ctx.Values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with $ctx.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod annotations: the chart-rendered Secret's checksum rolls pods when it changes. */}}
{{- define "hecate.podAnnotations" -}}
{{- if not .ctx.Values.secrets.existingSecret }}
checksum/secret: {{ include (print .ctx.Template.BasePath "/secret.yaml") .ctx | sha256sum }}
{{- end }}
{{- with .annotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Volumes every pod mounts: the root filesystem is read-only. */}}
{{- define "hecate.volumes" -}}
- name: tmp
  {{- toYaml (default (dict "emptyDir" (dict)) .tmpVolume) | nindent 2 }}
- name: home
  emptyDir: {}
- name: data
  emptyDir: {}
{{- with .extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "hecate.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: home
  mountPath: /home/hecate
- name: data
  mountPath: /app/.data
{{- with .extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Worker pools, resolved: every pool starts from worker.* (pools excluded) and its own keys replace those
values, except pdb, autoscaling and keda, which are merged key by key. With worker.pools empty there is
one pool, `default`. Each pool gets `component`: "worker" for the pool named default (the Deployment and
selector of the chart before pools), "worker-<name>" otherwise. Returns JSON {"pools": [...]}: use
(include "hecate.workerPools" . | fromJson).pools (numbers come back as floats: print them through int).
*/}}
{{- define "hecate.workerPools" -}}
{{- $worker := .Values.worker }}
{{- $pools := list }}
{{- if $worker.enabled }}
{{- $seen := dict }}
{{- range $entry := default (list (dict "name" "default")) $worker.pools }}
{{- if hasKey $seen $entry.name }}
{{- fail (printf "worker.pools: two pools are named %q" $entry.name) }}
{{- end }}
{{- $_ := set $seen $entry.name true }}
{{- $pool := omit (deepCopy $worker) "pools" "enabled" }}
{{- range $key, $value := $entry }}
{{- if has $key (list "pdb" "autoscaling" "keda") }}
{{- $merged := deepCopy (index $worker $key) }}
{{- range $k, $v := $value }}
{{- $_ := set $merged $k $v }}
{{- end }}
{{- $_ := set $pool $key $merged }}
{{- else }}
{{- $_ := set $pool $key $value }}
{{- end }}
{{- end }}
{{- $_ := set $pool "component" (eq $entry.name "default" | ternary "worker" (printf "worker-%s" $entry.name)) }}
{{- $pools = append $pools $pool }}
{{- end }}
{{- end }}
{{- toJson (dict "pools" $pools) }}
{{- end }}

{{/*
Settings the chart renders from one value each: setting them again through env / extraEnv would make
the pods disagree with what the chart derives from that value (terminationGracePeriodSeconds, the KEDA
query, the metrics port, the workspaces mount). Input: (dict "where" "worker.pools[runs]" "env" map "extraEnv" list).
*/}}
{{- define "hecate.assertChartOwnedEnv" -}}
{{- $owned := dict "GATEWAY_SHUTDOWN_GRACE_MS" "config.shutdownGraceMs" "WORKER_QUEUES" "worker.queues" "WORKER_HEALTH_PORT" "worker.healthPort" "GATEWAY_WORKSPACES_DIR" "workspaces.path" }}
{{- $names := keys (default dict .env) }}
{{- range (default list .extraEnv) }}
{{- $names = append $names .name }}
{{- end }}
{{- range $name := $names }}
{{- if hasKey $owned $name }}
{{- fail (printf "%s: %s is set by the chart from %s; set that value instead" $.where $name (index $owned $name)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The workspaces claim: existingClaim, or the one workspaces-pvc.yaml renders. */}}
{{- define "hecate.workspacesClaimName" -}}
{{- default (include "hecate.componentName" (dict "ctx" . "component" "workspaces")) .Values.workspaces.persistence.existingClaim }}
{{- end }}
