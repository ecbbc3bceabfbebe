"""``gluon.model_zoo``: MXNet 1.9.1's predefined vision models, with MXNet's parameter
names, so the files of MXNet's model zoo load (``vision.get_model('resnet18_v1',
pretrained=True)`` reads ``~/.mxnet/models/resnet18_v1-a0666292.params``)."""
from mxcy.gluon.model_zoo import model_store, vision
