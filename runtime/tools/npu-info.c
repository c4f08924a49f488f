/* npu-info: backends, devices, capabilities, memory and DRM nodes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <npu/npu.h>

static void print_json_string(const char *text)
{
  putchar('"');
  for (const char *c = text; *c; c++) {
    if (*c == '"' || *c == '\\')
      printf("\\%c", *c);
    else if ((unsigned char)*c < 0x20)
      printf("\\u%04x", *c);
    else
      putchar(*c);
  }
  putchar('"');
}

static const char *yes_no(bool value)
{
  return value ? "yes" : "no";
}

static void print_device_text(const npu_device_properties *p)
{
  printf("Device %u: %s\n", p->index, p->name);
  printf("  backend:             %s\n", p->backend);
  printf("  compute units:       %u\n", p->compute_units);
  printf("  row alignment:       %u bytes\n", p->row_alignment);
  printf("  memory total:        %" PRIu64 " MiB\n", p->memory_total >> 20);
  printf("  memory free:         %" PRIu64 " MiB\n", p->memory_free >> 20);
  printf("  host-visible memory: %s\n", yes_no(p->caps.host_visible_memory));
  printf("  host import:         %s\n", yes_no(p->caps.host_import));
  printf("  fd export:           %s%s\n", yes_no(p->caps.fd_export),
         p->caps.fd_export ? (p->caps.dmabuf_export ? " (dma-buf)" : " (memfd)") : "");
  printf("  fd import:           %s\n", yes_no(p->caps.fd_import));
  printf("  async copy:          %s\n", yes_no(p->caps.async_copy));
  printf("  cross-stream events: %s\n", yes_no(p->caps.cross_stream_events));
  if (p->caps.max_streams)
    printf("  max streams:         %u\n", p->caps.max_streams);
  else
    printf("  max streams:         unlimited\n");
  printf("  bf16 compute:        %s\n", yes_no(p->caps.bf16_compute));
}

static void print_device_json(const npu_device_properties *p)
{
  printf("{\"index\": %u, \"name\": ", p->index);
  print_json_string(p->name);
  printf(", \"backend\": ");
  print_json_string(p->backend);
  printf(", \"compute_units\": %u, \"row_alignment\": %u, \"memory_total\": %" PRIu64 ", \"memory_free\": %" PRIu64
         ", \"caps\": {\"host_visible_memory\": %s, \"host_import\": %s, \"fd_export\": %s, "
         "\"dmabuf_export\": %s, \"fd_import\": %s, \"async_copy\": %s, "
         "\"cross_stream_events\": %s, \"max_streams\": %u, \"bf16_compute\": %s}}",
         p->compute_units, p->row_alignment, p->memory_total, p->memory_free,
         p->caps.host_visible_memory ? "true" : "false", p->caps.host_import ? "true" : "false",
         p->caps.fd_export ? "true" : "false", p->caps.dmabuf_export ? "true" : "false",
         p->caps.fd_import ? "true" : "false",
         p->caps.async_copy ? "true" : "false", p->caps.cross_stream_events ? "true" : "false",
         p->caps.max_streams, p->caps.bf16_compute ? "true" : "false");
}

static void print_drm_json(const npu_drm_node *n)
{
  printf("{\"path\": ");
  print_json_string(n->path);
  printf(", \"kind\": ");
  print_json_string(n->kind);
  printf(", \"driver\": ");
  print_json_string(n->driver);
  printf(", \"bus\": ");
  print_json_string(n->bus);
  printf(", \"vendor_id\": %u, \"device_id\": %u}", n->vendor_id, n->device_id);
}

static int fail(const char *what, npu_status status)
{
  fprintf(stderr, "npu-info: %s failed: %s: %s\n", what, npu_status_name(status),
          npu_last_error_message());
  return 1;
}

int main(int argc, char **argv)
{
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      fprintf(stderr, "usage: %s [--json]\n"
                      "Lists gst-npu backends, devices and their capabilities, and the DRM\n"
                      "render/accel nodes of this system.\n", argv[0]);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }

  uint32_t backend_count, device_count;
  npu_status status = npu_backend_count(&backend_count);
  if (status != NPU_OK)
    return fail("npu_backend_count", status);
  status = npu_device_count(&device_count);
  if (status != NPU_OK)
    return fail("npu_device_count", status);

  enum { MAX_NODES = 64 };
  npu_drm_node nodes[MAX_NODES];
  uint32_t node_count = 0;
  npu_status drm_status = npu_drm_nodes(nodes, MAX_NODES, &node_count);
  if (node_count > MAX_NODES)
    node_count = MAX_NODES;

  if (json) {
    printf("{\"backends\": [");
    for (uint32_t b = 0; b < backend_count; b++) {
      const char *name;
      npu_backend_name(b, &name);
      printf("%s", b ? ", " : "");
      print_json_string(name);
    }
    printf("], \"devices\": [");
  } else {
    printf("Backends:");
    for (uint32_t b = 0; b < backend_count; b++) {
      const char *name;
      npu_backend_name(b, &name);
      printf(" %s", name);
    }
    printf("\n\n");
  }

  for (uint32_t d = 0; d < device_count; d++) {
    npu_device_properties props;
    status = npu_device_get_properties(d, &props);
    if (status != NPU_OK)
      return fail("npu_device_get_properties", status);
    if (json) {
      printf("%s", d ? ", " : "");
      print_device_json(&props);
    } else {
      print_device_text(&props);
      printf("\n");
    }
  }

  if (json) {
    printf("], \"drm\": {\"supported\": %s, \"nodes\": [",
           drm_status == NPU_OK ? "true" : "false");
    for (uint32_t i = 0; i < node_count; i++) {
      printf("%s", i ? ", " : "");
      print_drm_json(&nodes[i]);
    }
    printf("]}}\n");
    return 0;
  }

  printf("DRM render/accel nodes:\n");
  if (drm_status != NPU_OK)
    printf("  not available: %s\n", npu_last_error_message());
  else if (node_count == 0)
    printf("  none found (no /dev/dri render nodes, no /dev/accel nodes): no hardware "
           "accelerator here\n");
  for (uint32_t i = 0; i < node_count; i++)
    printf("  %s  %-6s driver=%s %s vendor=0x%04x device=0x%04x\n", nodes[i].path, nodes[i].kind,
           nodes[i].driver[0] ? nodes[i].driver : "?", nodes[i].bus, nodes[i].vendor_id,
           nodes[i].device_id);
  return 0;
}
