/*
 * NIC fusion through ext, as NCCL 2.30's automatic merge asks for it: the
 * devices of one group, in index order, up to maxDevsPerNic in one
 * makeVDevice (2.30.7 src/graph/topo.cc:1395-1413), maxDevsPerNic being 8 for
 * a v12 plugin and 4 before (:1870); then devices() counts the vNICs made and
 * each one's getProperties names its devices (:1719-1724, 1683-1703).
 * fabriclab exports v12, so NCCL asks it for 8 at once; a v11 inner (the mimic
 * inner: vProps of 4, 8 devices under one switch) takes 4. Unwrapped NCCL would
 * have asked for 4 and 4 and got two vNICs; through fabriclab it must get the
 * same two, not a refusal (after which NCCL fuses fewer NICs, :1421-1437). A
 * v12 inner takes the 8 in one; a group of at most 4 passes unchanged.
 */
#include "ext_nccl.h"
#include "tests/inner/mimic_record.h"

static const struct mimic_record *record(const char *inner)
{
	return ext_inner_symbol(inner, "mimic_record");
}

static void init_v12(const char *inner)
{
	struct fl_abi_comm_config cfg = { .traffic_class = -1 };
	void *ctx = NULL;
	int ndev = 0;

	ext_choose_inner(inner);
	CHECK(ncclNetPlugin_v12.init(&ctx, 42, &cfg, ext_logger, NULL) == 0, "init");
	CHECK(ncclNetPlugin_v12.devices(&ndev) == 0 && ndev == MIMIC_NDEV, "%d devices", ndev);
	CHECK(ncclNetPlugin_v12.make_vdevice != NULL, "fabriclab offers makeVDevice");
}

/* NCCL's look at the vNIC dev after the merge: the devices in its properties. */
static void check_vnic(int dev, int ndevs, int first)
{
	struct fl_abi_props_v12 p;

	memset(&p, 0, sizeof(p));
	CHECK(ncclNetPlugin_v12.get_properties(dev, &p) == 0, "getProperties(%d)", dev);
	CHECK(p.vprops.ndevs == ndevs, "vNIC %d fuses %d devices, want %d", dev, p.vprops.ndevs,
	      ndevs);
	for (int i = 0; i < p.vprops.ndevs && i < ndevs; i++)
		CHECK(p.vprops.devs[i] == first + i, "vNIC %d device %d is %d, want %d", dev, i,
		      p.vprops.devs[i], first + i);
}

/* NCCL asks for `ndevs` devices 0.. in one call; `want` vNICs of `width` are made. */
static void fuse(const char *inner, int ndevs, int width, int want)
{
	struct fl_abi_vprops_v12 v = { .ndevs = ndevs };
	const struct mimic_record *rec;
	int dev = -1, ndev = 0;

	init_v12(inner);
	if (!ncclNetPlugin_v12.make_vdevice)
		return;
	for (int i = 0; i < ndevs; i++)
		v.devs[i] = i;
	CHECK(ncclNetPlugin_v12.make_vdevice(&dev, &v) == 0, "makeVDevice of %d devices refused",
	      ndevs);
	rec = record(inner);
	CHECK(rec && rec->vdevs == want && rec->vdev_refused == 0, "%d vNIC(s) made, %d "
	      "refused, want %d", rec ? rec->vdevs : -1, rec ? rec->vdev_refused : -1, want);
	CHECK(dev == MIMIC_NDEV, "the vNIC handed back is %d, the first made is %d", dev,
	      MIMIC_NDEV);
	CHECK(ncclNetPlugin_v12.devices(&ndev) == 0 && ndev == MIMIC_NDEV + want,
	      "devices() counts %d, want the %d physical and %d virtual", ndev, MIMIC_NDEV, want);
	for (int k = 0; k < want; k++)
		check_vnic(MIMIC_NDEV + k, ndevs - k * width < width ? ndevs - k * width : width,
			   k * width);
}

static void v11_eight(void)
{
	fuse("mimic-v11", 8, 4, 2);
}

static void v11_five(void)
{
	fuse("mimic-v11", 5, 4, 1); /* device 4 stays physical: NCCL makes no vNIC of one */
}

static void v11_four(void)
{
	fuse("mimic-v11", 4, 4, 1);
}

static void v12_eight(void)
{
	fuse("mimic-v12", 8, 8, 1);
}

/* A device the inner refuses fails the call, named, as NCCL then expects (:1421). */
static void v11_refusal_passes_on(void)
{
	struct fl_abi_vprops_v12 v = { .ndevs = 8, .devs = { 0, 1, 2, 3, 4, 5, 6, 99 } };
	int dev = -1;

	init_v12("mimic-v11");
	if (ncclNetPlugin_v12.make_vdevice)
		CHECK(ncclNetPlugin_v12.make_vdevice(&dev, &v) != 0,
		      "a group the inner refuses in part is refused");
}

int main(void)
{
	int bad = 0;

	if (ext_find_dirs())
		return 1;
	setenv("FABRICLAB_REPORT", "off", 1);
	bad += ext_run_case("NCCL fuses 8 NICs of a v11 inner through fabriclab's v12: two vNICs "
			    "of 4, as unwrapped", v11_eight);
	bad += ext_run_case("5 NICs of a v11 inner: one vNIC of 4, the fifth left alone",
			    v11_five);
	bad += ext_run_case("4 NICs of a v11 inner: one call, unchanged", v11_four);
	bad += ext_run_case("8 NICs of a v12 inner: one vNIC of 8", v12_eight);
	bad += ext_run_case("an inner's refusal reaches NCCL", v11_refusal_passes_on);
	return bad ? 1 : 0;
}
