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
