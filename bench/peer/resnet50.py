"""resnet50 at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/resnet50.cpp with src/tbd/nn/resnet.cpp:
ResNet-50 v1.5 (torchvision's layout: stride in the 3x3 conv), 1000 classes,
112x112 images, cross-entropy, SGD momentum 0.9, weight decay 1e-4, lr 0.1
scaled by batch/256; fp32. 25,557,032 parameters.

Performance choices: fused SGD (fused=True), and the memory format given by
--memory-format. On this machine's CPU channels-last was measured faster
than contiguous (see README.md), so it is the default; the batches are
converted once when they are made (the input pipeline's job), the model once.
"""
import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F

import synthetic


def conv(cin, cout, kernel, stride=1, padding=0):
    return nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, bias=False)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride):
        super().__init__()
        cout = planes * self.expansion
        self.conv1, self.bn1 = conv(cin, planes, 1), nn.BatchNorm2d(planes)
        self.conv2, self.bn2 = conv(planes, planes, 3, stride, 1), nn.BatchNorm2d(planes)  # v1.5: stride here
        self.conv3, self.bn3 = conv(planes, cout, 1), nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self, classes=1000, width=64, blocks=(3, 4, 6, 3)):
        super().__init__()
        self.conv1, self.bn1 = conv(3, width, 7, 2, 3), nn.BatchNorm2d(width)
        layers, channels = [], width
        for s, count in enumerate(blocks):
            planes = width << s
            stage = []
            for b in range(count):
                stage.append(Bottleneck(channels, planes, 2 if s > 0 and b == 0 else 1))
                channels = planes * Bottleneck.expansion
            layers.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = nn.Linear(channels, classes)
        for m in self.modules():  # torchvision's initialisation, as tbd
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def build(args):
    image_size, classes = 112, 1000  # tbd's small scale: the published network, a quarter of the pixels
    fmt = torch.channels_last if args.memory_format == "channels_last" else torch.contiguous_format
    # tbd's synthetic_image_batches: four batches from a CPU generator seeded with the data seed.
    gen = torch.Generator().manual_seed(synthetic.data_seed(args.seed))
    batches = []
    for _ in range(4):
        images = torch.randn(args.batch_size, 3, image_size, image_size, generator=gen)
        labels = torch.randint(classes, (args.batch_size,), generator=gen)
        batches.append((images.contiguous(memory_format=fmt), labels))

    model = ResNet50(classes).to(memory_format=fmt).train()
    lr = 0.1 * args.batch_size / 256
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4, fused=True)

    def step(batch):
        images, labels = batch
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return timing.Peer(model, batches, [args.batch_size] * len(batches), step, "images",
                       {"image_size": image_size, "classes": classes, "effective_lr": lr,
                        "memory_format": args.memory_format, "optimizer": "SGD(fused=True)"})


if __name__ == "__main__":
    p = timing.parser("resnet50 (tbd small) in PyTorch", default_batch=32)
    p.add_argument("--memory-format", choices=["channels_last", "contiguous"], default="channels_last")
    timing.main("resnet50", build, p)
