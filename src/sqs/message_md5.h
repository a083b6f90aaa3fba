// MD5OfMessageAttributes as SQS computes it, which the SDKs check on send and receive: the
// attributes in name order, each as its name, its data type, a transport byte (1 for String and
// Number, 2 for Binary) and its value, each string and value preceded by its length as four
// big-endian bytes; the MD5 of all that in hex. Binary values count as their decoded bytes.
#pragma once

#include <string>

#include "queues/message.h"

namespace tf::sqs {

// "" when there are no attributes (SQS then sends no MD5).
std::string MessageAttributesMd5(const queues::MessageAttributes& attributes);

}  // namespace tf::sqs
